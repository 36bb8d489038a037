"""Matches checked against the runner's known tools and agents, when a run first uses them.

A ``matched(...)`` / ``guard(...)`` callback whose match can fit none of the tools the
runner knows -- its agents' function tools and sub-agents, and the tools its MCP servers
list -- would silently never run: a misspelled name, a server that is not there. It is
``InvalidCallbacks`` instead, with the known names and a did-you-mean, unless placed
with ``allow_unmatched=True``. An MCP server's tools are known once it listed them: a
match that fits none of the tools known so far, while a server it could come from has
not listed yet, is checked again when that server lists (``check_listed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from difflib import get_close_matches
from typing import Final

from hooks import CompiledCallbacks, InvalidCallbacks, Placed, ToolInfo
from hooks._errors import describe
from runner._agent import Agent

__all__ = ["check_listed", "check_matches"]

_SHOWN: Final = 12  # known names a message lists at most


def check_matches(lists: Iterable[CompiledCallbacks], agents: Sequence[Agent]) -> None:
    """Refuse a match in ``lists`` that fits no known tool, server or agent of ``agents``.

    A match that could still fit a tool an MCP server has not listed yet passes here.
    """
    known: dict[str, ToolInfo] = {}
    servers: set[str] = set()
    for agent in agents:
        known.update(agent.infos)
        servers.update(source.name for source in agent.sources)
    names = {agent.name for agent in agents}
    for placed in _placed(lists):
        match = placed.match
        assert match is not None  # _placed yields matched ones only
        if match.agents is not None and not any(match.agent(name) for name in names):
            wanted = [p.exact for p in match.agents if p.exact is not None]
            _refuse(placed, "agent", wanted, names)
        if not match.static:
            continue
        for server in match.servers or ():
            if server not in servers:
                _refuse(placed, "MCP server", [server], servers)
        if any(map(match.tool, known.values())):
            continue
        if servers and (match.servers is None or servers.intersection(match.servers)):
            continue  # may fit a tool a server lists when connected: checked then
        _refuse(placed, "tool", list(match.exact_tools()), known)


def check_listed(lists: Iterable[CompiledCallbacks], tools: Mapping[str, ToolInfo]) -> None:
    """Refuse a match in ``lists`` that fits none of ``tools``: every tool of the runner,
    its servers' listed ones included, once every server listed."""
    for placed in _placed(lists):
        match = placed.match
        assert match is not None
        if match.static and not any(map(match.tool, tools.values())):
            _refuse(placed, "tool", list(match.exact_tools()), tools)


def _placed(lists: Iterable[CompiledCallbacks]) -> list[Placed[object]]:
    """The matched callbacks of ``lists`` that must match something, each once."""
    seen: set[int] = set()
    found: list[Placed[object]] = []
    for compiled in lists:
        for placed in compiled.placed():
            if placed.match is None or placed.allow_unmatched or id(placed) in seen:
                continue
            seen.add(id(placed))
            found.append(placed)
    return found


def _refuse(placed: Placed[object], what: str, wanted: list[str], known: Iterable[str]) -> None:
    pool = sorted(known)
    hints = [near for name in wanted for near in get_close_matches(name, pool, n=1)]
    hint = f"; did you mean {hints[0]!r}?" if hints else ""
    shown = ", ".join(pool[:_SHOWN]) + (", ..." if len(pool) > _SHOWN else "")
    msg = (
        f"{describe(placed)} can match no {what} the runner knows "
        f"(known: {shown or 'none'}){hint} -- pass allow_unmatched=True if that is meant"
    )
    raise InvalidCallbacks(msg, callback=placed.callback)
