"""What a paused run waits for: ``PendingRequest`` per paused call, ``Frame`` per paused turn.

A ``before_tool`` hook that returns ``Pause(reason)`` stops its call before it runs;
the other calls of the same model turn still run, and the run ends paused. What it
needs to go on is plain data: per agent turn on the way to a pause (the root's, and a
sub-agent's inside one of its tool calls) a ``Frame`` holding that turn's messages so
far, the results of its calls that ran, the requests of its calls that paused and the
frames of its sub-agent calls that paused inside.

On its way up the loop a pause is one signal, ``Paused``: the guarded operation raises
it for a call a hook paused, an agent turn for the turn that paused; between the two,
the batch's calls come back to their turn as a value (``HeldBatch``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, final

from hooks import Message, ToolCall, ToolResult
from hooks._slots import slot_init

__all__ = [
    "ALLOWED",
    "ANSWERS",
    "DecisionKind",
    "Frame",
    "Held",
    "HeldBatch",
    "Paused",
    "PendingRequest",
    "Question",
    "RequestKind",
    "request_id",
]

DecisionKind: TypeAlias = Literal["approve", "edit", "reject", "respond"]
ALLOWED: Final[tuple[DecisionKind, ...]] = ("approve", "edit", "reject")
ANSWERS: Final[tuple[DecisionKind, ...]] = ("respond", "reject")
"""The decisions on a request of kind ``"input"``: answer the question, or decline it."""

RequestKind: TypeAlias = Literal["call", "input"]


def _frozen() -> Mapping[str, Any]:
    return MappingProxyType({})


def request_id(run_id: str, branch: str, step: int, call_id: str) -> str:
    """The id of the request for a call: the same in every process for the same run,
    agent branch, model step and call."""
    key = "\x1f".join((run_id, branch, str(step), call_id)).encode()
    return "req_" + hashlib.sha256(key).hexdigest()[:24]


@slot_init
@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A paused tool call waiting for a human: ``runner.resume`` takes a decision per ``id``.

    ``call`` is the call as the guards last saw it (name, args, call id), ``reason``
    the ``Pause``'s, ``agent`` / ``branch`` where it was called, ``allowed`` the
    decisions a resume may give (``"approve"``, ``"edit"``, ``"reject"``).

    A request of ``kind`` ``"input"`` is a question the call's tool asked while it ran
    (an MCP server's elicitation): ``reason`` is the server's message, ``schema`` the
    JSON schema of the answer it wants, ``question`` what the resumed call sends back
    with the answer (the server's key of the question and its opaque request state);
    ``allowed`` is then ``("respond", "reject")``: ``Respond(value)`` answers,
    ``Reject`` declines.
    """

    id: str
    call: ToolCall
    reason: str
    agent: str
    branch: str
    allowed: tuple[DecisionKind, ...] = ALLOWED
    kind: RequestKind = "call"
    schema: Mapping[str, Any] | None = field(default=None, hash=False)
    question: Question | None = None


@slot_init
@dataclass(frozen=True, slots=True)
class Question:
    """A tool's question in a paused call, as its resumed call answers it: the server's
    ``key`` of the question and its ``state`` (opaque, echoed back; ``None`` if none)."""

    key: str
    state: str | None = None


@slot_init
@dataclass(frozen=True, slots=True)
class Frame:
    """One agent turn on the way to a pause, as it stood when the run paused.

    ``message`` is the message the turn answers (as ``before_agent`` passed it),
    ``messages`` the turn's messages so far (the root's: those of this run only, the
    session keeps the rest), whose last one carries the paused batch's ``tool_calls``;
    ``step`` is the model step that asked for them. Each call of the batch is in one of
    ``results`` (it ran), ``requests`` (it paused) or ``children`` (a sub-agent it called
    paused inside).
    """

    agent: str
    branch: str
    message: Message
    messages: tuple[Message, ...]
    step: int
    results: Mapping[str, ToolResult] = field(default_factory=_frozen)
    requests: Mapping[str, PendingRequest] = field(default_factory=_frozen)
    children: Mapping[str, Frame] = field(default_factory=_frozen)

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The paused batch: the tool calls of the turn's last message."""
        return self.messages[-1].tool_calls if self.messages else ()

    def pending(self) -> Iterator[PendingRequest]:
        """Every request of this turn and of the sub-agent turns inside it, in call order."""
        for call in self.calls:
            request = self.requests.get(call.id)
            if request is not None:
                yield request
            child = self.children.get(call.id)
            if child is not None:
                yield from child.pending()


@slot_init
@dataclass(frozen=True, slots=True)
class Held:
    """A tool call of a batch that did not finish: it paused, or a sub-agent in it did."""

    request: PendingRequest | None
    child: Frame | None


@slot_init
@dataclass(frozen=True, slots=True)
class HeldBatch:
    """A batch of tool calls some of which are ``Held``: its step, its calls, what each came to.

    What the turn loop hands its agent turn when the batch paused; the turn makes it a
    ``Frame`` with the messages it has so far.
    """

    step: int
    calls: Sequence[ToolCall]
    done: Sequence[ToolResult | Held]

    def frame(self, agent: str, branch: str, message: Message, turn: tuple[Message, ...]) -> Frame:
        """The paused turn: ``turn`` its messages so far, ``message`` the one it answers.

        Each call is paired with what it came to; a call without one is a ``ValueError``,
        never a call silently left out of the paused turn.
        """
        results: dict[str, ToolResult] = {}
        requests: dict[str, PendingRequest] = {}
        children: dict[str, Frame] = {}
        for call, done in zip(self.calls, self.done, strict=True):
            if isinstance(done, ToolResult):
                results[call.id] = done
            elif done.request is not None:
                requests[call.id] = done.request
            elif done.child is not None:
                children[call.id] = done.child
        return Frame(
            agent,
            branch,
            message,
            turn,
            self.step,
            MappingProxyType(results),
            MappingProxyType(requests),
            MappingProxyType(children),
        )


@final
class Paused(Exception):  # a signal up the loop, never seen: caught where its level ends
    """A pause on its way up the loop, the one signal of one: a call paused, or a turn.

    ``Paused(reason, call=call)``: a ``before_tool`` hook paused ``call`` (as the guards
    last saw it) for ``reason``; the tool call makes it a ``PendingRequest``.
    ``Paused(message, call=call, schema=..., question=...)``: the call's tool asked a
    question (``message``, answered as ``schema`` says). ``Paused(frame=frame)``: an
    agent turn paused, standing as ``frame``; the parent's
    tool call that ran it holds it as a child, and the run keeps the root's as its
    state. Whatever it crosses on the way (a wrap, a span) sees this one type: a pause,
    never an error. Its text is the reason, or the paused turn's branch.
    """

    def __init__(
        self,
        reason: str = "",
        *,
        call: ToolCall | None = None,
        frame: Frame | None = None,
        schema: Mapping[str, Any] | None = None,
        question: Question | None = None,
    ) -> None:
        super().__init__(reason if frame is None else frame.branch)
        self.reason: Final = reason
        self.call: Final = call
        self.frame: Final = frame
        # A question the call's tool asked (an MCP elicitation): a request of kind "input".
        self.schema: Final = schema
        self.question: Final = question
