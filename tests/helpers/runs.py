"""Shared helpers of the runner tests: ``drive`` (a run in either mode), a tracer, small tools.

The ``mode`` fixture (sync or async) and ``waits`` are in ``tests/runner/conftest.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal, TypeAlias, TypeVar

from hooks import (
    AfterAgent,
    AfterModel,
    AfterTool,
    BeforeAgent,
    BeforeModel,
    BeforeResult,
    BeforeTool,
    Cont,
    ErrorResult,
    Failure,
    OnModelError,
    OnToolError,
    Outcome,
    Result,
)
from runner import (
    AgentContext,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Runner,
    RunResult,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResult,
)
from runner._sessions.leases import Leases

E = TypeVar("E")

Mode: TypeAlias = Literal["sync", "async"]
MODES: tuple[Mode, ...] = ("sync", "async")


def drive(
    runner: Runner,
    mode: Mode,
    message: str | Message,
    *,
    user_id: str = "user",
    session_id: str | None = None,
    callbacks: Sequence[object] = (),
) -> RunResult:
    """One run of ``runner`` on ``message``: ``run`` in sync mode, ``arun`` otherwise."""
    if mode == "sync":
        return runner.run(message, user_id=user_id, session_id=session_id, callbacks=callbacks)
    return asyncio.run(
        runner.arun(message, user_id=user_id, session_id=session_id, callbacks=callbacks)
    )


def calling(*calls: ToolCall, text: str = "") -> ModelResponse:
    """A model response asking for ``calls``."""
    return ModelResponse(text=text, tool_calls=calls)


def tool_messages(request: ModelRequest) -> list[Message]:
    """The tool-result messages of ``request``, in order."""
    return [message for message in request.messages if message.role == "tool"]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class AsyncScripted:
    """An async model answering like the ``ScriptedModel`` it wraps."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner

    async def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Yield to the loop once, then answer from ``inner``."""
        await asyncio.sleep(0)
        return self.inner.generate(request)


class LoggingModel:
    """A sync model that logs ``"model"`` on each call, then answers from ``inner``."""

    def __init__(self, inner: ScriptedModel, log: list[str]) -> None:
        self.inner = inner
        self.log = log

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Log the call, then answer (or raise) from the script."""
        self.log.append("model")
        return self.inner.generate(request)


class Trace(
    BeforeAgent,
    AfterAgent,
    BeforeModel,
    AfterModel,
    OnModelError,
    BeforeTool,
    AfterTool,
    OnToolError,
):
    """A callback at every built-in point: logs ``prefix + point[:tool]``, changes nothing."""

    def __init__(self, log: list[str], prefix: str = "") -> None:
        self.log = log
        self.prefix = prefix

    def _note(self, point: str, ctx: object) -> None:
        tool = f":{ctx.call.name}" if isinstance(ctx, ToolContext) else ""
        self.log.append(f"{self.prefix}{point}{tool}")

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Log and go on."""
        self._note("before_agent", ctx)
        return Cont(ctx)

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: AgentContext, /
    ) -> Result[ModelResponse, Exception]:
        """Log and pass the outcome on."""
        self._note("after_agent", ctx)
        return outcome

    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        """Log and go on."""
        self._note("before_model", ctx)
        return Cont(ctx)

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Log and pass the outcome on."""
        self._note("after_model", ctx)
        return outcome

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Log and pass the failure on."""
        self._note("on_model_error", ctx)
        return failure

    def before_tool(self, ctx: ToolContext, /) -> BeforeResult[ToolContext, ToolResult]:
        """Log and go on."""
        self._note("before_tool", ctx)
        return Cont(ctx)

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Log and pass the outcome on."""
        self._note("after_tool", ctx)
        return outcome

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Log and pass the failure on."""
        self._note("on_tool_error", ctx)
        return failure


def events_of(result: RunResult, kind: type[E]) -> list[E]:
    """The events of ``result`` that are instances of ``kind``, in order."""
    return [event for event in result.events if isinstance(event, kind)]


def sleeper(mode: Mode) -> str:
    """Which sleep a run in ``mode`` waits with."""
    return "time" if mode == "sync" else "asyncio"


class LeasesAndPauses:
    """What a custom store in a test needs beyond its sessions: a lease table, paused runs.

    A test's store subclasses it and writes ``load``, ``save`` and ``delete`` itself.
    """

    def __init__(self) -> None:
        self.leases = Leases()
        self.paused: dict[str, str] = {}

    def acquire(self, user_id: str, session_id: str, /, *, owner: str, ttl: float) -> None:
        """Take or renew the lease (``runner._sessions.leases.Leases``)."""
        self.leases.acquire(user_id, session_id, owner=owner, ttl=ttl)

    def release(self, user_id: str, session_id: str, /, *, owner: str) -> None:
        """Drop the lease if ``owner`` holds it."""
        self.leases.release(user_id, session_id, owner=owner)

    def save_paused(self, run_id: str, user_id: str, session_id: str, state_json: str, /) -> None:
        """Keep a paused run's state."""
        self.paused[run_id] = state_json

    def load_paused(self, run_id: str, /) -> str | None:
        """A paused run's state, or ``None``."""
        return self.paused.get(run_id)

    def delete_paused(self, run_id: str, /) -> None:
        """Forget a paused run's state."""
        self.paused.pop(run_id, None)
