"""``Settings``: what every part of one run shares, and the ``Meter`` of its tokens."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Final, final

from hooks import DispatchPolicy, Usage
from runner._mcp.hub import Hub
from runner._retry import RetryPolicy
from runner._run.engine import Engine
from runner._run.matching import Pending, RunPending
from runner._run.tracer import Tracer
from runner._streaming.channel import Channel

__all__ = ["Meter", "Settings"]

_NOTHING_USED: Final = Usage()  # immutable: every meter starts from this one


@final
class Meter:
    """The tokens a run's model calls used, every call that answered counted once."""

    __slots__ = ("_lock", "usage")

    def __init__(self) -> None:
        self.usage = _NOTHING_USED
        self._lock = threading.Lock()

    def add(self, usage: Usage) -> None:
        """Count one call's usage."""
        with self._lock:
            self.usage += usage


@final
class Settings:
    """What every part of one run shares: budgets, policy, sync or async, where threads run,
    how long a model call may take.

    ``engine`` executes the run's model and tool attempts and is its only source of
    time, ids and retry waits (``runner._run.engine``): the in-process one, or a durable
    one. ``channel`` and ``tracer`` are where a streamed run's deltas and a traced run's
    spans go; ``hub`` holds the runner's MCP connections, ``pending`` the matches that
    wait for their tools to be listed. Made once per run, so a plain
    slotted class (set once, read-only to type checkers) rather than a frozen dataclass,
    whose every field costs a call to set.
    """

    __slots__ = (
        "channel",
        "engine",
        "hub",
        "is_async",
        "max_steps",
        "meter",
        "model_deadline",
        "pending",
        "policy",
        "pool",
        "retry",
        "rng",
        "tracer",
    )

    def __init__(
        self,
        *,
        retry: RetryPolicy,
        max_steps: int,
        policy: DispatchPolicy,
        is_async: bool,
        pool: Callable[[], Executor],
        rng: random.Random,
        engine: Engine,
        model_deadline: float,
        meter: Meter | None = None,
        channel: Channel | None = None,
        tracer: Tracer | None = None,
        hub: Hub | None = None,
        pending: Pending | RunPending | None = None,
    ) -> None:
        self.retry: Final = retry
        self.max_steps: Final = max_steps
        self.policy: Final = policy
        self.is_async: Final = is_async
        self.pool: Final = pool
        self.rng: Final = rng
        self.engine: Final = engine
        self.model_deadline: Final = model_deadline  # seconds, each model attempt
        self.meter: Final = Meter() if meter is None else meter
        self.channel: Final = channel  # a streamed run's: deltas and events as they happen
        self.tracer: Final = tracer  # a traced run's: its spans (Runner(tracer_provider=...))
        self.hub: Final = hub  # the runner's MCP connections, when an agent has MCPTools
        # The runner's matches that wait for its MCP servers' tools (runner._run.matching).
        self.pending: Final = pending
