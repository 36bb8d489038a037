"""What a run leaves behind: typed event records and the ``RunResult``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeAlias

from typing_extensions import TypeVar

from hooks import Message, ModelRequest, ModelResponse, ToolCall, ToolResult, Usage
from hooks._slots import slot_init
from runner._pause.pending import PendingRequest
from runner._pause.runstate import RunState

__all__ = [
    "AttemptDiscardedEvent",
    "ErrorEvent",
    "Event",
    "FallbackEvent",
    "ModelAttemptEvent",
    "ModelChunk",
    "ModelResponseEvent",
    "Operation",
    "PauseEvent",
    "RetryEvent",
    "RunFinishedEvent",
    "RunResult",
    "RunStartedEvent",
    "RunStatus",
    "ShadowEvent",
    "StopEvent",
    "StreamEvent",
    "TextDelta",
    "ToolAttemptEvent",
    "ToolCallDelta",
    "ToolCallEvent",
    "ToolResultEvent",
    "UserMessageEvent",
]

Out = TypeVar("Out", default=str)

Operation: TypeAlias = Literal["model", "tool", "agent", "output"]
"""What an error, a retry or a fallback happened to (``"output"``: an agent's typed answer)."""

RunStatus: TypeAlias = Literal["completed", "stopped", "paused"]
"""How a run ended: ``"completed"`` with an answer, ``"stopped"`` by a ``StopRun``, or
``"paused"`` waiting for decisions on calls a ``before_tool`` hook paused."""


@slot_init
@dataclass(frozen=True, slots=True)
class _Record:
    # Where and when, positional first; each record's own fields are keyword-only.
    agent: str
    branch: str
    time: float


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessageEvent(_Record):
    """A message an agent was asked to answer (the user's, or a parent agent's request)."""

    message: Message


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelAttemptEvent(_Record):
    """The model is called with ``request``: what it really receives, after the before hooks."""

    request: ModelRequest
    attempt: int = 1


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResponseEvent(_Record):
    """A model answer the agent went on with (a ``Halt``'s, ``Fallback``'s or after hook's).

    The last one of a run is its final answer, ``after_agent``'s replacement included.
    """

    response: ModelResponse


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEvent(_Record):
    """A tool call the model asked for, as it asked, before its hooks ran."""

    call: ToolCall


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolAttemptEvent(_Record):
    """The tool runs with ``call``: what really runs, after the before hooks (and a retry)."""

    call: ToolCall
    attempt: int = 1


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultEvent(_Record):
    """The result the model got for ``call``, the call that ran (``result.is_error`` if failed)."""

    call: ToolCall
    result: ToolResult


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(_Record):
    """An operation's attempt failed, or an after hook turned its outcome into a failure.

    Recorded for every failed attempt, recovered or not: a ``RetryEvent`` or a
    ``FallbackEvent`` follows when an error hook recovered.
    """

    error: BaseException
    operation: Operation
    attempt: int = 1


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RetryEvent(_Record):
    """An error hook retried: ``attempt`` is the attempt about to run, after ``delay`` seconds.

    ``changed`` says the retry changed what runs, so it passed the before hooks again.
    """

    operation: Operation
    attempt: int
    delay: float
    changed: bool = False


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class FallbackEvent(_Record):
    """An error hook answered a failed ``attempt`` with a fallback value."""

    operation: Operation
    attempt: int = 1


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class AttemptDiscardedEvent(_Record):
    """Text already streamed for model ``attempt`` is not the answer: a UI drops it.

    ``reason``: the attempt failed (and was retried, fell back, or failed the run), or an
    ``after_model`` hook replaced its response. Only streamed runs record it, and only
    after deltas of that attempt went out. ``agent``, ``branch`` and ``call_id`` are
    those of the attempt's deltas: the text to drop is the one streamed with all three.
    """

    attempt: int
    reason: Literal["failed", "replaced"]
    call_id: str | None = None


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class StopEvent(_Record):
    """A callback raised ``StopRun(reason)``; the run ended here."""

    reason: str


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class PauseEvent(_Record):
    """A ``before_tool`` hook paused a call; ``request`` is what the run waits for."""

    request: PendingRequest


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class ShadowEvent(_Record):
    """A ``shadow`` callback would have decided otherwise than the live chain did.

    ``point`` is where, ``callback`` the shadow (as messages name it); ``live`` and
    ``would`` are the two decisions: ``"cont"`` (passed on unchanged), ``"replace"``
    (passed on a changed context), ``"halt"``, ``"pause"``, ``"pass"`` (an after or
    error point's outcome or failure handed on as it came), ``"replace"`` / ``"failure"``
    (a different outcome), ``"retry"``, ``"fallback"``, ``"raised"``. ``detail`` shows
    what the shadow returned or raised (at most 200 characters). ``tool`` and
    ``call_id`` name a tool call's.
    """

    point: str
    callback: str
    live: str
    would: str
    tool: str | None = None
    call_id: str | None = None
    detail: str = ""


@slot_init
@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of the model's text as it is generated.

    A streaming model yields ``TextDelta("Hel")``; a streamed run passes it on with the
    ``agent``, ``branch`` and ``call_id`` it came from filled in. ``call_id`` is the id
    of the parent agent's tool call whose sub-agent turn streams this text (the
    ``call.id`` of that call's ``ToolCallEvent``), ``None`` for the root agent's own
    text: two concurrent calls of one sub-agent share ``agent`` and ``branch``, and
    ``call_id`` tells their pieces apart.
    """

    text: str
    agent: str = ""
    branch: str = ""
    call_id: str | None = None


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call as it is generated: the ``index``-th call of the response.

    The first delta of a call carries its ``id`` and ``name``; ``arguments`` are pieces
    of its JSON text, to be joined in order. A streamed run fills in ``agent``,
    ``branch`` and ``call_id`` as on a ``TextDelta``: ``call_id`` is the parent's call
    that the streaming sub-agent answers (``None`` for the root agent), never ``id``,
    the call being generated.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    agent: str = ""
    branch: str = ""
    call_id: str | None = None


ModelChunk: TypeAlias = TextDelta | ToolCallDelta | ModelResponse
"""What a streaming model yields: deltas, then the whole ``ModelResponse``, last."""


Event: TypeAlias = (
    UserMessageEvent
    | ModelAttemptEvent
    | ModelResponseEvent
    | ToolCallEvent
    | ToolAttemptEvent
    | ToolResultEvent
    | ErrorEvent
    | RetryEvent
    | FallbackEvent
    | AttemptDiscardedEvent
    | StopEvent
    | PauseEvent
    | ShadowEvent
)
"""Any event record; ``match`` on it is exhaustive over the thirteen kinds."""


_EMPTY_STATE = RunState({}, "", "", "", "", "completed")


@slot_init
@dataclass(frozen=True, slots=True)
class RunResult(Generic[Out]):
    """The end of a run.

    ``output`` is the final answer: its text, or for an agent with an ``output_type`` the
    validated value of that type (``""``, or ``None`` when typed, if stopped or paused
    before one),
    ``status`` is ``"completed"``, ``"stopped"`` (then ``stop_reason`` says why) or
    ``"paused"`` (then ``pending`` holds the requests it waits for, and ``state`` is
    what ``Runner.resume`` takes, also as ``state.to_json()``),
    ``events`` is the run's record in order, ``session_id`` continues the
    conversation in a later ``run``, ``run_id`` names the run (observers see it in
    ``HookEvent.run_id``), ``state`` is the ``RunState``: read as a mapping, a
    read-only snapshot of the invocation state at the end of the run; ``usage`` the
    tokens of every model call that answered, sub-agents' included (zero when the
    models do not say). A resumed run's ``events`` are those since it resumed.
    """

    output: Out
    events: tuple[Event, ...]
    status: RunStatus
    stop_reason: str | None = None
    session_id: str = ""
    response: ModelResponse | None = None
    run_id: str = ""
    state: RunState = field(default_factory=lambda: _EMPTY_STATE)
    usage: Usage = field(default_factory=Usage)
    pending: tuple[PendingRequest, ...] = ()


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RunStartedEvent:
    """The first event of a streamed run."""

    run_id: str
    session_id: str
    agent: str
    time: float


@slot_init
@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinishedEvent:
    """The last event of a streamed run: ``result`` is what ``arun`` would return."""

    result: RunResult[Any]
    time: float


StreamEvent: TypeAlias = RunStartedEvent | Event | TextDelta | ToolCallDelta | RunFinishedEvent
"""What ``Runner.stream`` yields: the run's record as it happens, with the deltas."""
