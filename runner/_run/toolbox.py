"""``Toolbox``: the tools of an agent with MCP servers, within one run.

An agent's own tools are fixed when it is made; its servers' are known only once the
runner is connected. A plan of such an agent has a toolbox: before each model request
(and before a resumed turn goes on) it reads each server's listing from the runner's
``Hub`` (an async run's connection on its own loop, a sync run's on the hub's) --
connecting on first use, reading the list again after the server said it changed --
and merges them with the agent's own tools. It is the ``Invocation.tools``
the hooks read (``ToolContext.tool``), the specs the model is offered, and where a call
finds its ``MCPTool``. An agent's own tool keeps its name: a listed tool shown under the
same name (or one another server lists already) is left out, with a warning. A server
that cannot be reached offers the tools it listed last (none before a first listing),
with a warning; a call of one of them then fails as a tool error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from typing import Final, final

from hooks import ToolInfo, ToolSpec
from runner._agent import Agent
from runner._mcp.hub import Connection, Hub
from runner._mcp.listed import Listing, MCPTool
from runner._mcp.source import MCPTools

__all__ = ["Toolbox"]

logger: Final = logging.getLogger("runner")


@final
class Toolbox(Mapping[str, ToolInfo]):
    """An agent's tools and its servers' listed ones, by the name the model calls them."""

    __slots__ = ("_agent", "_hub", "_is_async", "_listed", "_listings", "specs")

    def __init__(self, agent: Agent, hub: Hub, *, is_async: bool) -> None:
        self._agent: Final = agent
        self._hub: Final = hub
        self._is_async: Final = is_async
        self._listings: tuple[Listing, ...] = tuple(() for _ in agent.sources)
        self._listed: dict[str, MCPTool] = {}
        self.specs: tuple[ToolSpec, ...] = agent.specs

    async def refresh(self) -> tuple[ToolSpec, ...]:
        """The specs the model is offered now: the servers' listings read (each from the
        connection, which connects on first use), merged again when one changed."""
        hub, is_async = self._hub, self._is_async
        listings: list[Listing] = []
        for source, last in zip(self._agent.sources, self._listings, strict=True):
            connection = self._connection(source)
            current = connection.current()
            if current is not None:  # connected, unchanged: nothing to wait for
                listings.append(current)
                continue
            work = connection.listing()
            try:
                listings.append(await work if is_async else hub.wait(work))
            except Exception as exc:  # a server down: its last listing stays
                logger.warning(
                    "MCP server %r: no tool list (%s); offering the %d tools listed last",
                    source.name,
                    exc,
                    len(last),
                )
                listings.append(last)
        if any(new is not old for new, old in zip(listings, self._listings, strict=True)):
            self._merge(tuple(listings))
        return self.specs

    def listed_servers(self) -> tuple[str, ...]:
        """The names of the agent's servers connected with their tools listed now."""
        return tuple(
            source.name
            for source in self._agent.sources
            if self._connection(source).current() is not None
        )

    def _connection(self, source: MCPTools) -> Connection:
        """The run's connection to ``source``: an async run's on its own loop, a sync
        run's on the hub's."""
        hub = self._hub
        return hub.on_loop(source) if self._is_async else hub.connection(source)

    def find(self, name: str) -> MCPTool | None:
        """The listed tool the model calls ``name``, if a server lists it."""
        return self._listed.get(name)

    def _merge(self, listings: tuple[Listing, ...]) -> None:
        agent = self._agent
        listed: dict[str, MCPTool] = {}
        for tools in listings:
            for tool in tools:
                name = tool.name
                if name in agent.tools or name in listed:
                    logger.warning(
                        "agent %r: MCP tool %r of server %r left out: the agent has a tool "
                        "of that name already",
                        agent.name,
                        name,
                        tool.source.name,
                    )
                    continue
                listed[name] = tool
        self._listings = listings
        self._listed = listed
        self.specs = (*agent.specs, *(tool.spec for tool in listed.values()))

    def __getitem__(self, name: str) -> ToolInfo:
        info = self._agent.infos.get(name)
        if info is not None:
            return info
        return self._listed[name].info

    def __iter__(self) -> Iterator[str]:
        yield from self._agent.infos
        yield from self._listed

    def __len__(self) -> int:
        return len(self._agent.infos) + len(self._listed)

    def __contains__(self, name: object) -> bool:
        return name in self._agent.infos or name in self._listed

    def __repr__(self) -> str:
        return f"Toolbox({self._agent.name!r}, {list(self)!r})"
