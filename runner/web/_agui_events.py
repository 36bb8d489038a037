"""A run's events as AG-UI events: ``Translator`` turns hookline's stream into SSE frames.

One ``Translator`` per AG-UI run (the client's ``threadId`` and ``runId``). What maps:

- ``RunStartedEvent`` -> ``RUN_STARTED``, the hookline run id in its metadata;
- ``TextDelta`` -> ``TEXT_MESSAGE_START`` (first piece of a model turn), then
  ``TEXT_MESSAGE_CONTENT``; the message ends at its turn's ``ModelResponseEvent``, a
  discard of its attempt, or the run's end;
- ``ToolCallEvent`` -> ``TOOL_CALL_START`` / ``TOOL_CALL_ARGS`` (the whole JSON) /
  ``TOOL_CALL_END``; ``ToolResultEvent`` -> ``TOOL_CALL_RESULT``; a paused call, or a
  resumed one the stream never showed, is started before what refers to it;
- ``AttemptDiscardedEvent`` -> ``CUSTOM`` ``hookline.discard`` (the ``messageId`` a UI
  drops; an answer a hook replaced then comes whole, as a message of its own),
  ``ShadowEvent`` -> ``hookline.shadow``, a ``HookEvent`` whose callback decided
  -> ``hookline.hook``;
- the end: ``RUN_FINISHED`` (a paused run's outcome an interrupt per pending request,
  see ``runner.web._agui_pause``), or ``RUN_ERROR``.

Text pieces are the hot path: their frame is a cached prefix and the piece's JSON string.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from typing import Any, Final, final

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    CustomEvent,
    EventType,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from hooks import HookEvent, ToolCall, ToolSpec
from runner import (
    AttemptDiscardedEvent,
    ModelResponseEvent,
    PauseEvent,
    PendingRequest,
    RunResult,
    ShadowEvent,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
)
from runner import RunFinishedEvent as HooklineFinished
from runner import RunStartedEvent as HooklineStarted
from runner.web._agui_pause import interrupts

__all__ = ["Translator"]

_CONTENT: Final = EventType.TEXT_MESSAGE_CONTENT.value
_dumps: Final = json.JSONEncoder(ensure_ascii=False).encode
_string: Final[Callable[[str], str]] = json.encoder.encode_basestring  # C; a piece's JSON


def _now() -> int:
    return int(time.time() * 1000)


def _frame(event: BaseEvent) -> str:
    return f"data: {event.model_dump_json(by_alias=True)}\n\n"


@final
class Translator:
    """hookline's events of one run, as the frames of AG-UI run ``run_id`` of ``thread_id``.

    ``specs`` finds a tool's argument schema by agent and tool name (for the edit option
    of a paused call's interrupt). Each method returns the frames to send (``""``: none).
    """

    __slots__ = (
        "_count",
        "_hot",
        "_last",
        "_open",
        "_replaced",
        "_specs",
        "_started",
        "run_id",
        "thread_id",
    )

    def __init__(
        self, thread_id: str, run_id: str, specs: Callable[[str, str], ToolSpec | None]
    ) -> None:
        self.thread_id: Final = thread_id
        self.run_id: Final = run_id
        self._specs: Final = specs
        self._count = 0
        # open text messages by (branch, call_id): (message id, content frame prefix)
        self._open: Final[dict[tuple[str, str | None], tuple[str, str]]] = {}
        self._last: Final[dict[tuple[str, str | None], str]] = {}  # latest message id per key
        self._started: Final[set[str]] = set()  # tool call ids shown in this run
        self._replaced: Final[set[str]] = set()  # branches whose streamed answer was replaced
        self._hot: tuple[str, str | None, str] | None = None  # the last piece's key, prefix

    def _id(self, kind: str) -> str:
        self._count += 1
        return f"{self.run_id}:{kind}{self._count}"

    def started(self, event: HooklineStarted) -> str:
        """``RUN_STARTED``, naming the hookline run it carries."""
        meta = {"hookline": {"runId": event.run_id, "agent": event.agent}}
        return _frame(
            RunStartedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                protocol_version=PROTOCOL_VERSION,
                timestamp=_now(),
                metadata=meta,
            )
        )

    def event(self, event: StreamEvent) -> str:
        """The frames for one of the run's events after its start (``started``)."""
        if type(event) is TextDelta:  # the hot path first: the piece of the last message
            hot = self._hot
            if hot is not None and event.branch == hot[0] and event.call_id == hot[1]:
                return f"{hot[2]}{_string(event.text)}}}\n\n" if event.text else ""
            return self._text(event)
        match event:
            case ModelResponseEvent(branch=branch, response=response):
                frames = "".join(self._end(key) for key in list(self._open) if key[0] == branch)
                if branch in self._replaced:  # streamed text was dropped: show the answer
                    self._replaced.discard(branch)
                    frames += self._whole((branch, None), response.text)
            case ToolCallEvent(call=call) | PauseEvent(request=PendingRequest(call=call)):
                frames = self._call(call)
            case ToolResultEvent(call=call, result=result):
                frame = ToolCallResultEvent(
                    message_id=self._id("r"),
                    tool_call_id=call.id,
                    content=result.content,
                    role="tool",
                    timestamp=_now(),
                    metadata={"hookline": {"isError": result.is_error}},
                )
                frames = self._call(call) + _frame(frame)
            case HooklineFinished():
                frames = self.finished(event)
            case AttemptDiscardedEvent():
                frames = self._discarded(event)
            case ShadowEvent():
                value = {
                    "agent": event.agent,
                    "branch": event.branch,
                    "point": event.point,
                    "callback": event.callback,
                    "live": event.live,
                    "would": event.would,
                    "tool": event.tool,
                    "callId": event.call_id,
                    "detail": event.detail,
                }
                frames = self._custom("hookline.shadow", value)
            case _:  # the other records have no AG-UI form
                frames = ""
        return frames

    def recorded(self, event: StreamEvent) -> str:
        """``event``'s frames when it comes from a run's record, which holds no text pieces:
        each model answer's text is a message, whole."""
        frames = self.event(event)
        if type(event) is ModelResponseEvent:
            frames += self._whole((event.branch, None), event.response.text)
        return frames

    def hook(self, event: HookEvent) -> str:
        """``hookline.hook`` for a dispatch a callback decided (``""`` for one none did)."""
        if event.callback is None:
            return ""
        error = event.error
        value = {
            "point": event.point,
            "agent": event.agent,
            "branch": event.branch,
            "outcome": event.outcome,
            "callback": event.callback,
            "tool": event.tool,
            "callId": event.call_id,
            "attempt": event.attempt,
            "duration": event.duration,
            "error": None if error is None else f"{type(error).__name__}: {error}",
        }
        return self._custom("hookline.hook", value)

    def finished(self, event: HooklineFinished) -> str:
        """The open messages' ends, then ``RUN_FINISHED``: an interrupt when it paused."""
        result: RunResult = event.result
        meta: dict[str, Any] = {"runId": result.run_id, "status": result.status}
        if result.stop_reason is not None:
            meta["stopReason"] = result.stop_reason
        ends = self._end_all()
        if result.status == "paused":
            outcome = RunFinishedInterruptOutcome(
                interrupts=interrupts(result.run_id, result.pending, self._specs)
            )
            finish = RunFinishedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                outcome=outcome,
                timestamp=_now(),
                metadata={"hookline": meta},
            )
        else:
            finish = RunFinishedEvent(
                thread_id=self.thread_id,
                run_id=self.run_id,
                result=result.output,
                timestamp=_now(),
                metadata={"hookline": meta},
            )
        return ends + _frame(finish)

    def failed(self, error: BaseException) -> str:
        """The open messages' ends, then ``RUN_ERROR`` naming ``error``."""
        message = f"{type(error).__name__}: {error}"
        frame = RunErrorEvent(message=message, code=type(error).__name__, timestamp=_now())
        return self._end_all() + _frame(frame)

    # -- the parts --------------------------------------------------------------------

    def _text(self, event: TextDelta) -> str:
        if not event.text:
            return ""
        key = (event.branch, event.call_id)
        opened = self._open.get(key)
        start = "" if opened is not None else self._text_start(key)
        prefix = self._open[key][1]
        self._hot = (event.branch, event.call_id, prefix)
        return f"{start}{prefix}{_string(event.text)}}}\n\n"

    def _text_start(self, key: tuple[str, str | None]) -> str:
        message_id = self._id("m")
        prefix = f'data: {{"type":"{_CONTENT}","messageId":{_dumps(message_id)},"delta":'
        self._open[key] = (message_id, prefix)
        self._last[key] = message_id
        start = TextMessageStartEvent(message_id=message_id, role="assistant", timestamp=_now())
        return _frame(start)

    def _end(self, key: tuple[str, str | None]) -> str:
        message_id, _ = self._open.pop(key)
        self._hot = None
        return _frame(TextMessageEndEvent(message_id=message_id, timestamp=_now()))

    def _whole(self, key: tuple[str, str | None], text: str) -> str:
        if not text:
            return ""
        start = self._text_start(key)
        return start + self._open[key][1] + _dumps(text) + "}\n\n" + self._end(key)

    def _end_all(self) -> str:
        return "".join(self._end(key) for key in list(self._open))

    def _discarded(self, event: AttemptDiscardedEvent) -> str:
        key = (event.branch, event.call_id)
        ends = self._end(key) if key in self._open else ""
        if event.reason == "replaced":
            self._replaced.add(event.branch)
        value = {
            "messageId": self._last.get(key),
            "agent": event.agent,
            "branch": event.branch,
            "callId": event.call_id,
            "attempt": event.attempt,
            "reason": event.reason,
        }
        return ends + self._custom("hookline.discard", value)

    def _call(self, call: ToolCall) -> str:
        if call.id in self._started:
            return ""
        self._started.add(call.id)
        ts = _now()
        return (
            _frame(ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name, timestamp=ts))
            + _frame(ToolCallArgsEvent(tool_call_id=call.id, delta=_args(call.args), timestamp=ts))
            + _frame(ToolCallEndEvent(tool_call_id=call.id, timestamp=ts))
        )

    def _custom(self, name: str, value: Mapping[str, Any]) -> str:
        return _frame(CustomEvent(name=name, value=value, timestamp=_now()))


def _args(args: Mapping[str, Any]) -> str:
    try:
        return _dumps(dict(args))
    except (TypeError, ValueError):  # a value JSON cannot hold: shown as its text
        return _dumps({key: repr(value) for key, value in args.items()})
