"""``CallbackTable``: per agent, the callbacks a run dispatches, made once per callbacks list.

A run's agent dispatches the runner's callbacks, then the run's, then the agent's own.
The combined lists are made once per run-callbacks list and kept, keyed by the identity
of its items, so a fresh list of the same callbacks (``callbacks=[guard]`` on every
call) builds nothing; every run checks them for its mode (sync or async).
"""

from __future__ import annotations

from collections.abc import Sequence
from operator import is_
from typing import Final, final

from hooks import CompiledCallbacks, compile_callbacks
from runner._agent import Agent
from runner._run.readiness import ready_for_async, ready_for_sync

__all__ = ["CallbackTable"]

_SIZE: Final = 64  # run-callbacks lists kept; past it the table starts over


@final
class CallbackTable:
    """The callbacks of every agent of one runner, combined with a run's on demand."""

    __slots__ = ("_agents", "_combined", "_own", "callbacks")

    def __init__(self, callbacks: CompiledCallbacks, agents: Sequence[Agent]) -> None:
        self.callbacks: Final = callbacks
        self._agents: Final = tuple(agents)
        # Each agent's own callbacks, validated once here rather than on every run.
        self._own: Final = {id(each): compile_callbacks(each.callbacks) for each in agents}
        # The run callbacks' items (by identity) -> (them, per agent id the full list).
        self._combined: dict[
            tuple[int, ...], tuple[tuple[object, ...], dict[int, CompiledCallbacks]]
        ] = {}

    def for_run(
        self, run_callbacks: CompiledCallbacks, *, check_sync: bool
    ) -> dict[int, CompiledCallbacks]:
        """Per agent id: the runner's, the run's, then the agent's own callbacks, checked
        for a sync run (``check_sync``) or an async one."""
        items = run_callbacks.callbacks
        key = tuple(map(id, items))
        entry = self._combined.get(key)
        if entry is None or not all(map(is_, entry[0], items)):
            base = self.callbacks + run_callbacks
            table = {key_: base + own for key_, own in self._own.items()}
            entry = (items, table)
            if len(self._combined) >= _SIZE:
                self._combined.clear()
            self._combined[key] = entry
        # A few dict lookups per agent; nothing is cached that could go stale.
        for agent in self._agents:
            if check_sync:
                ready_for_sync(agent, entry[1][id(agent)])
            else:
                ready_for_async(entry[1][id(agent)])
        return entry[1]

    def clear(self) -> None:
        """Forget the combined lists (a closed runner keeps none alive)."""
        self._combined.clear()
