"""``CallbackTable``: per agent, the callbacks a run dispatches, made once per callbacks list.

A run's agent dispatches the runner's callbacks, then the run's, then the agent's own.
The combined lists are made once per run-callbacks list and kept, keyed by the identity
of its items, so a fresh list of the same callbacks (``callbacks=[guard]`` on every
call) builds nothing. What a run of one kind (sync or async) needs of them is decided
once per combined list too, as each agent's ``AgentSetup``: whether that kind of run
can call them (a refusal is never kept: the next run is checked, and refused, again),
which points await, which are wrapped, which observers listen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import is_
from typing import Final, final

from hooks import WRAP_MODEL, WRAP_TOOL, CompiledCallbacks, Message, Placed, compile_callbacks
from runner._agent import Agent
from runner._run.matching import Pending, RunPending, check_matches
from runner._run.readiness import POINTS, ready_for_async, ready_for_sync
from runner._streaming.delta import ON_DELTA

__all__ = ["AgentSetup", "CallbackTable", "Setups"]

_SIZE: Final = 64  # run-callbacks lists kept; past it the table starts over


@final
class AgentSetup:
    """One agent as one kind of run (sync or async) dispatches it, decided once.

    ``compiled``: its callbacks, checked for that kind of run; ``awaiting``: the points
    with an async method, the only ones an async run dispatches with ``arun_*`` (none
    in a sync run); ``wrapped``: the wrap points some callback wraps (the others run
    their operation directly); ``hooks_deltas``: whether a callback sees stream deltas;
    ``observers``: the ``on_event`` methods, each with whether it is async, the
    callback it belongs to and whether that one is an audit (whose errors never stop a
    run); ``shadowed``: whether the list has ``shadow`` callbacks to ask beside the live
    chains (a sync run refuses an async one); ``by_tool``: whether a callback is matched
    by tool (tool points then dispatch the list's view for the called tool); ``system``:
    the system message its requests open with (none without an instruction).
    """

    __slots__ = (
        "awaiting",
        "by_tool",
        "compiled",
        "hooks_deltas",
        "observers",
        "shadowed",
        "system",
        "wrapped",
    )

    def __init__(self, agent: Agent, compiled: CompiledCallbacks, *, is_async: bool) -> None:
        self.compiled: Final = compiled
        self.awaiting: Final = frozenset(
            point.name
            for point in POINTS
            if is_async and compiled.chain(point.name, point.kind).any_async
        )
        self.wrapped: Final = frozenset(
            point.name for point in (WRAP_MODEL, WRAP_TOOL) if compiled.defines(point)
        )
        self.hooks_deltas: Final = compiled.defines(ON_DELTA)
        chain = compiled.chain("on_event", "event")
        self.observers: Final = tuple(
            (fn, is_async, owner, compiled.tier(owner) == "audit")
            for fn, is_async, owner in zip(chain.fns, chain.asyncs, chain.owners, strict=True)
        )
        self.by_tool: Final = compiled.by_tool
        shadows = compiled.shadows()
        if not is_async:  # a sync run cannot await a shadow either: refused before it runs
            for _, alone in shadows:
                for point in POINTS:
                    if point.kind != "wrap":
                        alone.sync_chain(point.name, point.kind)
        self.shadowed: Final = bool(shadows)
        self.system: Final = (Message("system", agent.instruction),) if agent.instruction else ()


@final
class Setups:
    """Every agent's ``AgentSetup`` for one kind of run, by agent id; ``silent`` when no
    agent has any callback (nothing of the run is shown to a callback)."""

    __slots__ = ("by_agent", "silent")

    def __init__(self, by_agent: dict[int, AgentSetup]) -> None:
        self.by_agent: Final = by_agent
        self.silent: Final = not any(setup.compiled for setup in by_agent.values())


@dataclass(slots=True)
class _Entry:
    """One run-callbacks list: its items, per agent id the combined lists, and what a sync
    or an async run made of them (``None`` until such a run passed the checks)."""

    items: tuple[object, ...]
    combined: dict[int, CompiledCallbacks]
    waiting: tuple[Placed[object], ...] = ()  # its matches that wait for listed tools
    for_sync: Setups | None = field(default=None)
    for_async: Setups | None = field(default=None)


@final
class CallbackTable:
    """The callbacks of every agent of one runner, combined with a run's on demand."""

    __slots__ = ("_agents", "_combined", "_own", "_plain", "callbacks", "pending")

    def __init__(self, callbacks: CompiledCallbacks, agents: Sequence[Agent]) -> None:
        self.callbacks: Final = callbacks
        self._agents: Final = tuple(agents)
        # Each agent's own callbacks, validated once here rather than on every run.
        self._own: Final = {id(each): compile_callbacks(each.callbacks) for each in agents}
        # The run callbacks' items (by identity) -> their entry; runs without any share one.
        self._combined: dict[tuple[int, ...], _Entry] = {}
        # Matches that may fit a tool an MCP server lists later, checked as servers list.
        self.pending: Final = Pending(self._agents)
        placed = [compiled for compiled in (callbacks, *self._own.values()) if compiled.placed()]
        if placed:
            self.pending.add(check_matches(placed, self._agents))
        self._plain: Final = _Entry((), self._combine(callbacks))

    def for_run(self, run_callbacks: CompiledCallbacks, *, check_sync: bool) -> Setups:
        """Per agent id: the runner's, the run's, then the agent's own callbacks, as a sync
        run (``check_sync``) or an async one dispatches them.

        Raises, before anything runs, when that kind of run cannot call them.
        """
        entry = self._entry(run_callbacks) if run_callbacks.callbacks else self._plain
        if check_sync:
            if entry.for_sync is None:
                entry.for_sync = self._checked(entry.combined, is_async=False)
            return entry.for_sync
        if entry.for_async is None:
            entry.for_async = self._checked(entry.combined, is_async=True)
        return entry.for_async

    def _entry(self, run_callbacks: CompiledCallbacks) -> _Entry:
        """The entry of these run callbacks, made on first sight of their items."""
        items = run_callbacks.callbacks
        key = tuple(map(id, items))
        entry = self._combined.get(key)
        if entry is None or not all(map(is_, entry.items, items)):
            waiting: tuple[Placed[object], ...] = ()
            if run_callbacks.placed():
                waiting = tuple(check_matches((run_callbacks,), self._agents))
            entry = _Entry(items, self._combine(self.callbacks + run_callbacks), waiting)
            if len(self._combined) >= _SIZE:
                self._combined.clear()
            self._combined[key] = entry
        return entry

    def pending_for(self, run_callbacks: CompiledCallbacks) -> Pending | RunPending:
        """What a run given ``run_callbacks`` checks as its agents' servers list."""
        if not run_callbacks.callbacks:
            return self.pending
        return self.pending.with_run(self._entry(run_callbacks).waiting)

    def agent_list(self, run_callbacks: CompiledCallbacks, agent: Agent) -> CompiledCallbacks:
        """What ``agent`` dispatches in a run given ``run_callbacks``: the runner's, the
        run's, then the agent's own callbacks (``KeyError``: not one of the runner's)."""
        entry = self._entry(run_callbacks) if run_callbacks.callbacks else self._plain
        return entry.combined[id(agent)]

    def _combine(self, base: CompiledCallbacks) -> dict[int, CompiledCallbacks]:
        """Per agent id: ``base`` then the agent's own callbacks, as that agent dispatches
        them (callbacks matched to other agents left out)."""
        return {
            id(agent): (base + self._own[id(agent)]).for_agent(agent.name) for agent in self._agents
        }

    def _checked(self, combined: dict[int, CompiledCallbacks], *, is_async: bool) -> Setups:
        """Every agent's callbacks checked for that kind of run, then decided for it.

        A check's verdict cannot go stale: an agent is immutable, and a compiled list
        builds each point's chain once and keeps it.
        """
        for agent in self._agents:
            if is_async:
                ready_for_async(combined[id(agent)])
            else:
                ready_for_sync(agent, combined[id(agent)])
        return Setups(
            {
                id(agent): AgentSetup(agent, combined[id(agent)], is_async=is_async)
                for agent in self._agents
            }
        )

    def clear(self) -> None:
        """Forget the combined lists (a closed runner keeps none alive)."""
        self._combined.clear()
