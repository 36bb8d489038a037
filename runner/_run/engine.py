"""How a run executes its attempts and reads the world: the ``Engine`` seam.

Everything a run does that is not deterministic goes through its engine: the model
and tool attempts, the clock its records are stamped with (every event of a result,
a ``HookEvent``'s ``time``, a stream's first and last events), the ids it makes, the
wait before a retry and the sleep itself. Two clocks stay outside, as nothing recorded
or decided depends on them: a ``HookEvent``'s ``duration``, measured with
``time.perf_counter`` in this execution, and the session lease, held in real time
against other processes (``runner._sessions.leases``). The loop hands the engine
plain inputs: where an attempt runs (the agent's branch, the tool call) and the attempt
itself, a coroutine function the loop made (``runner._run.attempts``); a number of
seconds to wait.

``IN_PROCESS``, the default, runs each attempt here and now and reads the wall clock
and ``secrets``; since that is all its ``model`` and ``tool`` do, the loop runs the
attempts of a run on it in place, without making each a function to hand over. A
durable engine (``runner._durable.engine``) runs each attempt as a checkpointed step
and answers the rest from its record, so a recovered run replays the same run.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import time
from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import Any, Final, Protocol, TypeAlias, final

from hooks import ModelResponse, Outcome, ToolCall, ToolResult

__all__ = ["IN_PROCESS", "KEY", "Engine", "InProcess", "ModelAttempt", "ToolAttempt"]

KEY: Final[ContextVar[str]] = ContextVar("hookline_idempotency_key")
"""The idempotency key of the tool attempt under way, set by a durable engine around each
tool step (``runner.idempotency_key()`` reads it; an MCP call sends it in its ``_meta``)."""

ModelAttempt: TypeAlias = Callable[[], Coroutine[Any, Any, Outcome[ModelResponse]]]
"""One model attempt, made by the loop: run it to get its outcome."""

ToolAttempt: TypeAlias = Callable[[], Coroutine[Any, Any, Outcome[ToolResult]]]
"""One tool attempt, made by the loop: run it to get its outcome."""


class Engine(Protocol):
    """How one run executes its attempts and reads the clock, ids and waits.

    ``ordered`` engines need every operation issued in the same order on every
    execution of a run (a durable engine matches a replayed step to its record by its
    place), so the tool calls of one response run one by one, never concurrently.
    """

    @property
    def ordered(self) -> bool:
        """Whether operations must be issued one at a time, in a fixed order."""
        ...

    def now(self) -> float:
        """The time to stamp a record with, in seconds since the epoch."""
        ...

    def new_id(self) -> str:
        """A fresh id (a session's, when a run starts one)."""
        ...

    async def model(self, branch: str, attempt: ModelAttempt, /) -> Outcome[ModelResponse]:
        """One model attempt of the agent at ``branch``: ``attempt()``, or its record."""
        ...

    async def tool(
        self, branch: str, call: ToolCall, attempt: ToolAttempt, /
    ) -> Outcome[ToolResult]:
        """One attempt of ``call`` by the agent at ``branch``: ``attempt()``, or its record."""
        ...

    async def delay(self, seconds: float, /) -> float:
        """The wait before a retry, as drawn: ``seconds``, or what a recorded run drew."""
        ...

    async def sleep(self, seconds: float, is_async: bool, /) -> None:
        """Wait ``seconds`` before the next attempt (on the event loop if ``is_async``)."""
        ...


@final
class InProcess:
    """The default engine: attempts run in this process; wall clock, random ids."""

    __slots__ = ()

    # Builtins, no method around them: a record's timestamp costs what time.time() does.
    now = staticmethod(time.time)
    new_id = staticmethod(functools.partial(secrets.token_hex, 16))  # 128 random bits, in hex

    @property
    def ordered(self) -> bool:
        """No: tool calls of one response may run concurrently."""
        return False

    async def model(self, branch: str, attempt: ModelAttempt, /) -> Outcome[ModelResponse]:
        """The attempt, run here."""
        return await attempt()

    async def tool(
        self, branch: str, call: ToolCall, attempt: ToolAttempt, /
    ) -> Outcome[ToolResult]:
        """The attempt, run here."""
        return await attempt()

    async def delay(self, seconds: float, /) -> float:
        """``seconds``, as drawn."""
        return seconds

    async def sleep(self, seconds: float, is_async: bool, /) -> None:
        """On the event loop in an async run, blocking in a sync one."""
        if seconds <= 0:
            return
        if is_async:
            await asyncio.sleep(seconds)
        else:
            time.sleep(seconds)


IN_PROCESS: Final = InProcess()
"""The engine of every run but a durable one."""
