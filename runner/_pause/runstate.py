"""``RunState``: where a run stands, as plain data that survives the process (JSON).

A run's ``result.state``. As a read-only ``Mapping`` it is the invocation state at the
end of the run (``result.state["count"]``). A paused run's state also holds what
``Runner.resume`` needs -- ids, the session version it builds on, the step count, the
paused turns (``Frame``), the pending requests, the decisions so far and the tokens
used, the callbacks it ran under and, from a runner given ``state_keys``, a signature
-- and ``to_json`` / ``RunState.from_json`` carry it to another process. Nothing live is
inside: agents and tools are bound again by name when the run resumes.

``from_json`` reads in time linear in the text, refuses text over ``MAX_STATE_CHARS``
and raises ``ValueError`` for every malformed input (nesting too deep included).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias, TypeVar, cast, get_args, overload

from hooks import Approve, Decision, Edit, Reject, Respond, StateKey, Usage
from hooks._slots import slot_init
from runner._pause.codec import (
    _list,
    _object,
    _refuse,
    _str,
    decode_message,
    decode_tool_call,
    decode_tool_result,
    decode_usage,
    encode_message,
    encode_tool_call,
    encode_tool_result,
    encode_usage,
)
from runner._pause.pending import DecisionKind, Frame, PendingRequest, Question

__all__ = [
    "MAX_STATE_CHARS",
    "SCHEMA",
    "RunState",
    "StateStatus",
    "decode_request",
    "encode_decision",
    "encode_request",
]

SCHEMA: Final = 2
"""The version of ``RunState.to_json``'s format; ``from_json`` refuses any other.

Schema 1 (hookline 0.2) recorded no callbacks, so a resume could not tell whether its
guards were in force: such a state is refused, naming why."""

MAX_STATE_CHARS: Final = 64 * 1024 * 1024
"""The longest text ``RunState.from_json`` reads (characters, or bytes for ``bytes``)."""

T = TypeVar("T")
D = TypeVar("D")

StateStatus: TypeAlias = Literal["completed", "stopped", "paused"]


def _frozen() -> Mapping[str, Any]:
    return MappingProxyType({})


@slot_init
@dataclass(frozen=True, slots=True, eq=False)
class RunState(Mapping[str, Any]):
    """A run's state: its invocation state values (read as a mapping) and where it stands.

    ``pending`` are a paused run's requests (empty otherwise), ``frame`` its root
    agent's paused turn, ``session_version`` the version of the session it builds on
    (a resume is refused once the session moved on), ``decisions`` the decisions of
    earlier resumes, by request id, ``session_keys`` which state values are
    session-scoped (``StateKey(..., scope="session")``), ``callbacks`` the descriptions
    of the callbacks the run had besides its agents' own (the runner's, then the run's;
    ``runner._run.resume.describe``): a resume must bring each again. ``signature`` is
    the HMAC a runner given ``state_keys`` put on a paused state (empty otherwise).
    """

    data: Mapping[str, Any]  # the invocation state values (what the mapping reads)
    run_id: str
    agent: str
    user_id: str
    session_id: str
    status: StateStatus
    session_version: int = 0
    steps: int = 0
    frame: Frame | None = None
    decisions: Mapping[str, Decision] = field(default_factory=_frozen)
    usage: Usage = field(default_factory=Usage)
    session_keys: tuple[str, ...] = ()  # the names in ``data`` that are session-scoped
    callbacks: tuple[str, ...] = ()  # the run's and its runner's callbacks, described
    signature: str = ""  # "hmac-sha256:<hex>" over the JSON without it, or ""

    @property
    def pending(self) -> tuple[PendingRequest, ...]:
        """The requests a paused run waits for, in call order (empty unless paused)."""
        return () if self.frame is None else tuple(self.frame.pending())

    def __getitem__(self, key: StateKey[Any] | str) -> Any:
        """The value under ``key`` (a ``StateKey`` or its name); ``KeyError`` when none."""
        return self.data[key.name if isinstance(key, StateKey) else key]

    def __contains__(self, key: object) -> bool:
        return (key.name if isinstance(key, StateKey) else key) in self.data

    @overload
    def get(self, key: StateKey[T], default: D = ..., /) -> T | D: ...
    @overload
    def get(self, key: str, /) -> Any: ...
    @overload
    def get(self, key: str, default: Any, /) -> Any: ...
    def get(  # pyright: ignore[reportIncompatibleMethodOverride]  # Mapping's str forms kept, a StateKey form added
        self, key: StateKey[Any] | str, default: Any = None, /
    ) -> Any:
        """The value stored under ``key`` (a ``StateKey`` or its name), or ``default``.

        As ``State.get``: ``result.state.get(COUNT)`` reads what ``state.set(COUNT, ...)``
        wrote during the run, typed by the key.
        """
        return self.data.get(key.name if isinstance(key, StateKey) else key, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __eq__(self, other: object) -> bool:
        # Another RunState: every field; any other mapping: the state values only, so
        # ``result.state == {"count": 2}`` reads as it says.
        if isinstance(other, RunState):
            return self.to_json() == other.to_json()
        if isinstance(other, Mapping):
            return dict(self.data) == dict(cast("Mapping[object, object]", other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a mapping: unhashable

    def __repr__(self) -> str:
        return (
            f"RunState(run_id={self.run_id!r}, status={self.status!r}, "
            f"data={dict(self.data)!r}, pending={len(self.pending)})"
        )

    def to_json(self) -> str:
        """This state as JSON text (schema ``SCHEMA``); every state value must be JSON data."""
        for key, value in self.data.items():
            try:
                json.dumps(value)
            except (TypeError, ValueError) as exc:
                msg = (
                    f"state value {key!r} must be JSON data (str, int, float, bool, None, "
                    f"lists and str-keyed dicts of them) to go into a RunState, got "
                    f"{type(value).__name__} {value!r:.60}"
                )
                raise TypeError(msg) from exc
        data = {
            "schema": SCHEMA,
            "run_id": self.run_id,
            "agent": self.agent,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "status": self.status,
            "session_version": self.session_version,
            "steps": self.steps,
            "values": dict(self.data),
            "frame": None if self.frame is None else _encode_frame(self.frame),
            "decisions": {key: encode_decision(d) for key, d in self.decisions.items()},
            "usage": encode_usage(self.usage),
            "session_keys": list(self.session_keys),
            "callbacks": list(self.callbacks),
        }
        if self.signature:
            data["signature"] = self.signature
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes, /) -> RunState:
        """The state ``to_json`` wrote; ``ValueError`` naming the field when it is not one.

        Text longer than ``MAX_STATE_CHARS``, nesting deeper than Python's recursion
        limit, a ``schema`` other than ``SCHEMA`` (``true`` included) and an empty
        ``run_id`` are refused with a ``ValueError`` too.
        """
        if not isinstance(cast("object", text), str | bytes):  # untyped callers
            msg = f"a RunState is read from str or bytes, got {type(text).__name__}"
            raise TypeError(msg)
        if len(text) > MAX_STATE_CHARS:
            msg = (
                f"a RunState's JSON is at most {MAX_STATE_CHARS} characters, "
                f"got {len(text)} starting {text[:60]!r}"
            )
            raise ValueError(msg)
        try:
            return cls._decode(text)
        except RecursionError:
            msg = f"a RunState's JSON is nested too deep to read, starting {text[:60]!r}"
            raise ValueError(msg) from None

    @classmethod
    def _decode(cls, text: str | bytes) -> RunState:
        try:
            data: object = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            msg = f"a RunState must be JSON text, got {text[:60]!r}: {exc}"
            raise ValueError(msg) from exc
        fields = _object(data, "run_state", _REQUIRED, ("signature",))
        schema = fields["schema"]
        if type(schema) is not int or schema != SCHEMA:
            why = (
                ": schema 1 is hookline 0.2's, which records no callbacks, so a resume "
                "could not bring its guards back; finish it with hookline 0.2 or run again"
                if type(schema) is int and schema == 1
                else ""
            )
            _refuse("run_state.schema", f"{SCHEMA} (this hookline's RunState format)", schema, why)
        run_id = _str(fields["run_id"], "run_state.run_id")
        if not run_id:
            _refuse("run_state.run_id", "a non-empty string", run_id)
        status = _str(fields["status"], "run_state.status")
        if status not in get_args(StateStatus):
            _refuse("run_state.status", "'completed', 'stopped' or 'paused'", status)
        values = _table(fields["values"], "run_state.values")
        decisions = _table(fields["decisions"], "run_state.decisions")
        frame = fields["frame"]
        return cls(
            data=MappingProxyType(dict(values)),
            run_id=run_id,
            agent=_str(fields["agent"], "run_state.agent"),
            user_id=_str(fields["user_id"], "run_state.user_id"),
            session_id=_str(fields["session_id"], "run_state.session_id"),
            status=cast("StateStatus", status),
            session_version=_int(fields["session_version"], "run_state.session_version"),
            steps=_int(fields["steps"], "run_state.steps"),
            frame=None if frame is None else _decode_frame(frame, "run_state.frame"),
            decisions=MappingProxyType(
                {
                    key: decode_decision(value, f"run_state.decisions.{key}")
                    for key, value in decisions.items()
                }
            ),
            usage=decode_usage(fields["usage"], where="run_state.usage"),
            session_keys=tuple(
                _str(key, f"run_state.session_keys[{index}]")
                for index, key in enumerate(_list(fields["session_keys"], "run_state.session_keys"))
            ),
            callbacks=tuple(
                _str(name, f"run_state.callbacks[{index}]")
                for index, name in enumerate(_list(fields["callbacks"], "run_state.callbacks"))
            ),
            signature=_str(fields.get("signature", ""), "run_state.signature"),
        )


_REQUIRED: Final = (
    "schema",
    "run_id",
    "agent",
    "user_id",
    "session_id",
    "status",
    "session_version",
    "steps",
    "values",
    "frame",
    "decisions",
    "usage",
    "session_keys",
    "callbacks",
)


def _int(value: object, where: str) -> int:
    if type(value) is not int or value < 0:
        _refuse(where, "an int >= 0", value)
    return value


def _table(data: object, where: str) -> Mapping[str, object]:
    """``data`` as a JSON object of any keys (JSON object keys are strings): one pass."""
    if type(data) is not dict:
        _refuse(where, "an object", data)
    return cast("dict[str, object]", data)


def encode_decision(decision: Decision) -> dict[str, Any]:
    """A decision as JSON data: ``{"kind": "approve" | "edit" | "reject" | "respond", ...}``."""
    match decision:
        case Approve():
            return {"kind": "approve"}
        case Edit(args):
            return {"kind": "edit", "args": dict(args)}
        case Reject(message):
            return {"kind": "reject", "message": message}
        case Respond(value):
            return {"kind": "respond", "value": dict(value)}


def decode_decision(data: object, where: str) -> Decision:
    """The decision ``encode_decision`` wrote; a field another kind has is refused too."""
    fields = _object(data, where, ("kind",), ("args", "message", "value"))
    kind = _str(fields["kind"], f"{where}.kind")
    if kind == "approve":
        _object(data, where, ("kind",), ())
        return Approve()
    if kind == "edit":
        args = _object(data, where, ("kind", "args"), ())["args"]
        return Edit(dict(_table(args, f"{where}.args")))
    if kind == "respond":
        value = _object(data, where, ("kind", "value"), ())["value"]
        return Respond(dict(_table(value, f"{where}.value")))
    if kind != "reject":
        _refuse(f"{where}.kind", "'approve', 'edit', 'reject' or 'respond'", kind)
    message = _object(data, where, ("kind", "message"), ())["message"]
    return Reject(_str(message, f"{where}.message"))


def _encode_frame(frame: Frame) -> dict[str, Any]:
    return {
        "agent": frame.agent,
        "branch": frame.branch,
        "message": encode_message(frame.message),
        "messages": [encode_message(message) for message in frame.messages],
        "step": frame.step,
        "results": {key: encode_tool_result(r) for key, r in frame.results.items()},
        "requests": {key: _encode_request(r) for key, r in frame.requests.items()},
        "children": {key: _encode_frame(child) for key, child in frame.children.items()},
    }


def _decode_frame(data: object, where: str) -> Frame:
    fields = _object(
        data,
        where,
        ("agent", "branch", "message", "messages", "step", "results", "requests", "children"),
        (),
    )

    def table(name: str) -> Mapping[str, object]:
        return _table(fields[name], f"{where}.{name}")

    messages = _list(fields["messages"], f"{where}.messages")
    return Frame(
        agent=_str(fields["agent"], f"{where}.agent"),
        branch=_str(fields["branch"], f"{where}.branch"),
        message=decode_message(fields["message"], where=f"{where}.message"),
        messages=tuple(
            decode_message(item, where=f"{where}.messages[{index}]")
            for index, item in enumerate(messages)
        ),
        step=_int(fields["step"], f"{where}.step"),
        results=MappingProxyType(
            {
                key: decode_tool_result(value, where=f"{where}.results.{key}")
                for key, value in table("results").items()
            }
        ),
        requests=MappingProxyType(
            {
                key: _decode_request(value, f"{where}.requests.{key}")
                for key, value in table("requests").items()
            }
        ),
        children=MappingProxyType(
            {
                key: _decode_frame(value, f"{where}.children.{key}")
                for key, value in table("children").items()
            }
        ),
    )


def _encode_request(request: PendingRequest) -> dict[str, Any]:
    encoded: dict[str, Any] = {
        "id": request.id,
        "call": encode_tool_call(request.call),
        "reason": request.reason,
        "agent": request.agent,
        "branch": request.branch,
        "allowed": list(request.allowed),
    }
    if request.kind != "call":  # a question's: the server's schema, key and state
        encoded["kind"] = request.kind
        encoded["schema"] = None if request.schema is None else dict(request.schema)
        question = request.question
        encoded["question"] = (
            None if question is None else {"key": question.key, "state": question.state}
        )
    return encoded


def _decode_request(data: object, where: str) -> PendingRequest:
    fields = _object(
        data,
        where,
        ("id", "call", "reason", "agent", "branch", "allowed"),
        ("kind", "schema", "question"),
    )
    allowed = _list(fields["allowed"], f"{where}.allowed")
    kinds = ("approve", "edit", "reject", "respond")
    for index, kind in enumerate(allowed):
        if kind not in kinds:
            _refuse(f"{where}.allowed[{index}]", "'approve', 'edit', 'reject' or 'respond'", kind)
    kind = fields.get("kind", "call")
    if kind not in ("call", "input"):
        _refuse(f"{where}.kind", "'call' or 'input'", kind)
    schema = fields.get("schema")
    if schema is not None:
        schema = dict(_table(schema, f"{where}.schema"))
    return PendingRequest(
        id=_str(fields["id"], f"{where}.id"),
        call=decode_tool_call(fields["call"], where=f"{where}.call"),
        reason=_str(fields["reason"], f"{where}.reason"),
        agent=_str(fields["agent"], f"{where}.agent"),
        branch=_str(fields["branch"], f"{where}.branch"),
        allowed=cast("tuple[DecisionKind, ...]", tuple(allowed)),
        kind=kind,
        schema=schema,
        question=_question(fields.get("question"), f"{where}.question"),
    )


def _question(data: object, where: str) -> Question | None:
    if data is None:
        return None
    fields = _object(data, where, ("key", "state"), ())
    state = fields["state"]
    return Question(
        _str(fields["key"], f"{where}.key"),
        None if state is None else _str(state, f"{where}.state"),
    )


encode_request: Final = _encode_request
"""A pending request as the JSON data a ``RunState`` holds it in."""
decode_request: Final = _decode_request
"""The pending request JSON data ``data`` holds; a ``ValueError`` naming the field if not one."""
