"""``Settings``: what every part of one run shares, and the ``Meter`` of its tokens."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, final

from hooks import DispatchPolicy, Usage
from runner._retry import RetryPolicy
from runner._streaming.channel import Channel

if TYPE_CHECKING:
    from runner._run.engine import Engine
    from runner._telemetry.telemetry import (
        Telemetry,  # only a run given a tracer provider imports it
    )

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


@dataclass(frozen=True, slots=True)
class Settings:
    """What every part of one run shares: budgets, policy, sync or async, where threads run.

    ``engine`` executes the run's model and tool attempts and is its only source of
    time, ids and retry waits (``runner._run.engine``): the in-process one, or a durable one.
    ``channel`` and ``telemetry`` are where a streamed run's deltas and a traced run's
    spans go.
    """

    retry: RetryPolicy
    max_steps: int
    policy: DispatchPolicy
    is_async: bool
    pool: Callable[[], Executor]
    rng: random.Random
    engine: Engine
    meter: Meter = field(default_factory=Meter)
    channel: Channel | None = None  # a streamed run's: deltas and events as they happen
    telemetry: Telemetry | None = None  # a traced run's: its spans (Runner(tracer_provider=...))

    async def delay(self, attempt: int, requested: float | None) -> float:
        """The wait after failed attempt ``attempt``: the policy's, or a ``Retry``'s, capped."""
        return await self.engine.delay(self, attempt, requested)

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds``: on the event loop in an async run, blocking in a sync one."""
        await self.engine.sleep(self, seconds)
