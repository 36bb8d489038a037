"""The vocabulary the built-in hook points speak: messages, requests, responses, tools.

The runner fills these; they live in ``hooks`` so callbacks import nothing else.
All are frozen slotted dataclasses: a hook that wants a change builds a new one
(``dataclasses.replace``) and returns it in a ``Cont``. Fields are checked when a
record is built (a few ``type(x) is str`` tests), so a wrong one fails there, with a
``TypeError`` naming the field, what it must be and what it got -- not later, inside
a model or a tool.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, NoReturn, TypeAlias

from hooks._parts import FilePart, ImagePart, Part, ReasoningPart
from hooks._slots import slot_init

__all__ = [
    "Message",
    "ModelRequest",
    "ModelResponse",
    "OutputSpec",
    "Role",
    "ToolCall",
    "ToolResult",
    "ToolSpec",
    "Usage",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
_ROLES: Final = frozenset(("system", "user", "assistant", "tool"))


@slot_init
@dataclass(frozen=True, slots=True)
class ToolCall:
    """The model's request to run tool ``name`` with ``args``; ``id`` pairs it with its result."""

    id: str
    name: str
    args: Mapping[str, Any] = field(default_factory=dict[str, Any])

    def __post_init__(self) -> None:
        id_: object = self.id  # as given, whatever the annotations say
        name: object = self.name
        args: object = self.args
        if type(id_) is not str and not isinstance(id_, str):
            _refuse(self, "id", "a str", id_)
        if type(name) is not str and not isinstance(name, str):
            _refuse(self, "name", "a str", name)
        if type(args) is not dict and not isinstance(args, Mapping):
            _refuse(self, "args", "a mapping of argument names to values", args)


@slot_init
@dataclass(frozen=True, slots=True)
class Message:
    """One turn of a conversation.

    An assistant message may carry ``tool_calls``; a tool result reaches the model as a
    message with role ``"tool"`` whose ``tool_call_id`` names the call it answers.
    ``content`` is the text; ``parts`` what else the message carries after it
    (``hooks._parts``): images and files in a user or tool message, the model's
    reasoning in an assistant message. A system message is text only. ``is_error``
    marks a tool message whose result is an error (``ToolResult.is_error``), for the
    APIs that take the flag (Anthropic's ``tool_result``); only a tool message sets it.
    """

    role: Role
    content: str
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    name: str | None = None
    parts: tuple[Part, ...] = ()
    is_error: bool = False

    def __post_init__(self) -> None:
        call_id, name, calls = self.tool_call_id, self.name, self.tool_calls
        content: object = self.content
        if self.role not in _ROLES:
            _refuse(self, "role", "one of 'system', 'user', 'assistant', 'tool'", self.role)
        if type(content) is not str and not isinstance(content, str):
            _refuse(self, "content", "a str", content)
        if call_id is not None and not _is_str(call_id):
            _refuse(self, "tool_call_id", "a str or None", call_id)
        if name is not None and not _is_str(name):
            _refuse(self, "name", "a str or None", name)
        if calls or type(calls) is not tuple:
            _check_calls(self, calls, unique=False)
        if self.parts or type(self.parts) is not tuple:
            _check_parts(self, self.parts, _ALLOWED[self.role], f"{self.role} message")
        if self.is_error is not False:
            _check_error_flag(self)


@slot_init
@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it: name, description and a JSON schema of its arguments."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=dict[str, Any])


@slot_init
@dataclass(frozen=True, slots=True)
class OutputSpec:
    """The shape the final answer must have: a JSON object ``schema`` named ``name``.

    A model with native structured output maps it to its API's own field (OpenAI's
    ``json_schema`` format, Anthropic's ``output_config``), asking for the schema to be
    enforced when ``strict`` (the runner sets it only where the schema allows it); the
    answer's text is then that JSON. ``description`` says what the answer is, for the
    APIs that take one. Checked when built: a wrong field is a ``TypeError``.
    """

    name: str
    schema: Mapping[str, Any]
    strict: bool = False
    description: str = ""

    def __post_init__(self) -> None:
        if not _is_str(self.name) or not self.name:
            _refuse(self, "name", "a non-empty str", self.name)
        if not isinstance(self.schema, Mapping):
            _refuse(self, "schema", "a JSON schema (a mapping)", self.schema)
        if type(self.strict) is not bool:
            _refuse(self, "strict", "a bool", self.strict)
        if not _is_str(self.description):
            _refuse(self, "description", "a str", self.description)


@slot_init
@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What the model receives: the conversation so far and the tools it may call.

    ``messages`` is any immutable sequence: a tuple, or the runner's transcript, which
    grows without copying; compare and index it like a tuple, and build a changed
    request with a tuple (``replace(request, messages=(*request.messages, extra))``).
    ``output`` is the answer's required shape when the agent has an ``output_type`` and
    its model answers in that shape natively (``None`` otherwise: a model without it is
    offered a final-result tool among ``tools`` instead).
    """

    messages: Sequence[Message]
    tools: tuple[ToolSpec, ...] = ()
    output: OutputSpec | None = None


@slot_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one model call used (or, summed with ``+``, a whole run).

    ``cached_tokens`` are the part of ``input_tokens`` the provider served from its
    prompt cache; ``reasoning_tokens`` the part of ``output_tokens`` spent reasoning.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def __post_init__(self) -> None:
        for name in ("input_tokens", "output_tokens", "cached_tokens", "reasoning_tokens"):
            value: object = getattr(self, name)
            if type(value) is not int or value < 0:
                _refuse(self, name, "an int >= 0", value)

    @property
    def total_tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    def __add__(self, other: Usage) -> Usage:
        if type(other) is not Usage:
            return NotImplemented
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_tokens + other.cached_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )


@slot_init
@dataclass(frozen=True, slots=True)
class ModelResponse:
    """What the model answers: text, tool calls, or both.

    ``usage`` is what the call cost in tokens, when the model says; ``finish_reason``
    why it stopped, in the provider's words (``"stop"``, ``"tool_calls"``, ``"length"``);
    ``model`` the model that answered, as the provider names it (``"gpt-4o-2024-08-06"``
    for a request to ``"gpt-4o"``), when it says. ``parts`` holds the model's reasoning
    (``ReasoningPart``), which the answer's assistant message carries on, so the provider
    gets it back as its API requires.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None
    finish_reason: str | None = None
    model: str | None = None
    parts: tuple[ReasoningPart, ...] = ()

    def __post_init__(self) -> None:
        calls = self.tool_calls
        text: object = self.text
        if type(text) is not str and not isinstance(text, str):
            _refuse(self, "text", "a str", text)
        if calls or type(calls) is not tuple:
            _check_calls(self, calls, unique=True)
        usage: object = self.usage
        if usage is not None and type(usage) is not Usage:
            _refuse(self, "usage", "a Usage or None", usage)
        reason: object = self.finish_reason
        if reason is not None and not _is_str(reason):
            _refuse(self, "finish_reason", "a str or None", reason)
        model: object = self.model
        if model is not None and not _is_str(model):
            _refuse(self, "model", "a str or None", model)
        if self.parts or type(self.parts) is not tuple:
            _check_parts(self, self.parts, (ReasoningPart,), "model response")


@slot_init
@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool's answer as the model will see it; ``is_error`` marks a failed call.

    ``parts`` holds images and files the tool gives back beside its text;
    ``structured`` the JSON object a tool answers beside its text (an MCP tool's
    ``structuredContent``, checked against its ``ToolInfo.output_schema`` by the
    server), which the model does not see: hooks and the result's reader do. It takes
    no part in the result's hash.
    """

    content: str
    is_error: bool = False
    parts: tuple[ImagePart | FilePart, ...] = ()
    structured: Mapping[str, Any] | None = field(default=None, hash=False)

    def __post_init__(self) -> None:
        content: object = self.content
        is_error: object = self.is_error
        structured: object = self.structured
        if type(content) is not str and not isinstance(content, str):
            _refuse(self, "content", "a str", content)
        if type(is_error) is not bool:
            _refuse(self, "is_error", "a bool", is_error)
        if structured is not None and not isinstance(structured, Mapping):
            _refuse(self, "structured", "a mapping (a JSON object) or None", structured)
        if self.parts or type(self.parts) is not tuple:
            _check_parts(self, self.parts, (ImagePart, FilePart), "tool result")


def _is_str(value: object) -> bool:
    # For the fields that are None unless given; the fields every record has test
    # themselves in line: a call per field is measurable on every message a run builds.
    return type(value) is str or isinstance(value, str)


def _check_calls(record: object, calls: object, *, unique: bool) -> None:
    """``calls`` must be a tuple of ``ToolCall`` (a list would not hash), ids distinct if
    ``unique``."""
    if not isinstance(calls, tuple):
        _refuse(record, "tool_calls", "a tuple of ToolCall (write tuple(calls))", calls)
    items: tuple[object, ...] = calls  # pyright: ignore[reportUnknownVariableType]
    ids: set[str] = set()
    for call in items:  # one plain loop: measured cheaper than set(map(...)) for a few calls
        if type(call) is not ToolCall and not isinstance(call, ToolCall):
            _refuse(record, "tool_calls", "a tuple of ToolCall, holding", call)
        if unique and call.id in ids:
            msg = (
                f"{type(record).__name__}.tool_calls holds two calls with id {call.id!r}; "
                "each tool call of one response needs its own id"
            )
            raise ValueError(msg)
        ids.add(call.id)


_ALLOWED: Final[dict[str, tuple[type, ...]]] = {
    "system": (),
    "user": (ImagePart, FilePart),
    "assistant": (ReasoningPart,),
    "tool": (ImagePart, FilePart),
}
"""The parts a message of each role may carry."""


def _check_parts(record: object, parts: object, allowed: tuple[type, ...], where: str) -> None:
    """``parts`` must be a tuple of parts of the ``allowed`` kinds (``where`` says whose)."""
    if not isinstance(parts, tuple):
        _refuse(record, "parts", "a tuple of parts (write tuple(parts))", parts)
    items: tuple[object, ...] = parts  # pyright: ignore[reportUnknownVariableType]
    for part in items:
        if not isinstance(part, allowed):
            carries = " or ".join(kind.__name__ for kind in allowed) or "no parts (text only)"
            article = "an" if where.startswith("assistant") else "a"
            msg = (
                f"{type(record).__name__}.parts: {article} {where} carries {carries}, "
                f"got {type(part).__name__} {part!r:.60}"
            )
            raise TypeError(msg)


def _check_error_flag(message: Message) -> None:
    """``is_error`` is a bool, and ``True`` only on a tool message."""
    flag: object = message.is_error
    if type(flag) is not bool:
        _refuse(message, "is_error", "a bool", flag)
    if message.role != "tool":
        msg = f"Message.is_error marks a tool result: a {message.role} message cannot set it"
        raise ValueError(msg)


def _refuse(record: object, name: str, expected: str, got: object) -> NoReturn:
    msg = f"{type(record).__name__}.{name} must be {expected}, got {type(got).__name__} {got!r:.60}"
    raise TypeError(msg)
