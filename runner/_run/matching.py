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

import threading
from collections.abc import Iterable, Mapping, Sequence
from difflib import get_close_matches
from typing import Final, final

from hooks import CompiledCallbacks, InvalidCallbacks, Placed, ToolInfo
from hooks._errors import describe
from runner._agent import Agent

__all__ = ["Pending", "RunPending", "check_matches"]

_SHOWN: Final = 12  # known names a message lists at most


def check_matches(
    lists: Iterable[CompiledCallbacks], agents: Sequence[Agent]
) -> list[Placed[object]]:
    """Refuse a match in ``lists`` that fits no known tool, server or agent of ``agents``.

    Returns the matches that fit no tool known yet but could fit one an MCP server has
    not listed yet: ``Pending`` checks them again as servers list.
    """
    known: dict[str, ToolInfo] = {}
    servers: set[str] = set()
    for agent in agents:
        known.update(agent.infos)
        servers.update(source.name for source in agent.sources)
    names = {agent.name for agent in agents}
    deferred: list[Placed[object]] = []
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
            deferred.append(placed)  # may fit a tool a server lists: checked then
            continue
        _refuse(placed, "tool", list(match.exact_tools()), known)
    return deferred


@final
class Pending:
    """What a runner knows of its tools, and the matches of its own and its agents'
    callbacks that fit none known yet: checked again each time a run's agent has its
    servers' tools listed, and refused once every server they could fit a tool of has
    listed and none does. A run's own matches wait beside them (``with_run``)."""

    __slots__ = ("_known", "_listed", "_lock", "_placed", "_servers")

    def __init__(self, agents: Sequence[Agent]) -> None:
        self._placed: tuple[Placed[object], ...] = ()
        self._known: dict[str, ToolInfo] = {}
        for agent in agents:
            self._known.update(agent.infos)
        self._servers: Final = frozenset(s.name for agent in agents for s in agent.sources)
        self._listed: set[str] = set()
        self._lock: Final = threading.Lock()

    def add(self, placed: Iterable[Placed[object]]) -> None:
        """Check ``placed`` too (the runner's and its agents' callbacks')."""
        self._placed = (*self._placed, *placed)

    def with_run(self, placed: tuple[Placed[object], ...]) -> Pending | RunPending:
        """What a run given callbacks with the waiting matches ``placed`` checks."""
        return RunPending(self, placed) if placed else self

    def listed(
        self,
        tools: Mapping[str, ToolInfo],
        servers: Iterable[str],
        also: Sequence[Placed[object]] = (),
    ) -> None:
        """``servers`` listed, offering ``tools``: refuse a match (of the runner's, or
        ``also``) that now cannot fit."""
        waiting = (*self._placed, *also)
        if not waiting:  # the common case: nothing waits
            return
        with self._lock:
            self._known.update(tools)
            self._listed.update(servers)
            for placed in waiting:
                match = placed.match
                assert match is not None  # only matched ones wait
                if any(map(match.tool, self._known.values())):
                    continue
                could = self._servers if match.servers is None else set(match.servers)
                if could <= self._listed:  # refused again by each run until fixed
                    pool = {
                        name: info
                        for name, info in self._known.items()
                        if match.servers is None or info.server in match.servers
                    }
                    _refuse(placed, "tool", list(match.exact_tools()), pool)


@final
class RunPending:
    """A run's waiting matches beside its runner's (``Pending.with_run``)."""

    __slots__ = ("_own", "_runner")

    def __init__(self, runner: Pending, own: tuple[Placed[object], ...]) -> None:
        self._runner: Final = runner
        self._own: Final = own

    def listed(self, tools: Mapping[str, ToolInfo], servers: Iterable[str]) -> None:
        """``Pending.listed``, the run's own matches included."""
        self._runner.listed(tools, servers, self._own)


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
