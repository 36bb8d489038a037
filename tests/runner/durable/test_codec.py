"""What a durable run stores is JSON that loads back equal; a forged record is a ValueError."""

from __future__ import annotations

import datetime
import json
import pickle
import sys
import threading
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hooks import (
    Message,
    ModelRequest,
    ModelResponse,
    StopRun,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from runner import ProviderError, RunResult, RunState
from runner._durable.codec import (
    PICKLE,
    RecoveredError,
    StoredError,
    StoredResponse,
    allowed,
    dump,
    json_codec,
    load,
    stored,
)
from runner._durable.serializer import JSONSerializer
from runner._events import (
    AttemptDiscardedEvent,
    ErrorEvent,
    FallbackEvent,
    ModelAttemptEvent,
    ModelResponseEvent,
    PauseEvent,
    RetryEvent,
    ShadowEvent,
    StopEvent,
    ToolAttemptEvent,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from runner._models.transient import is_transient
from runner._pause.pending import PendingRequest
from runner._sessions.store import Session
from runner._sessions.transcript import Transcript
from tests.helpers import strategies


class KeywordOnly(Exception):
    """Like ``openai.APIStatusError``: its ``__init__`` wants keywords, so plain pickle fails."""

    def __init__(self, message: str, *, status_code: int, headers: dict[str, str]) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.headers = headers
        self.lock = threading.Lock()  # something no record keeps


class APIConnectionError(Exception):
    """Named like the SDKs' connection error: transient by its name alone."""


class _Response:
    """An HTTP response as an SDK error holds it: a status and headers, nothing JSON."""

    def __init__(self, status_code: int, headers: dict[str, str]) -> None:
        self.status_code = status_code
        self.headers = headers


class WithResponse(Exception):
    """An error whose transience is read off its response's headers."""

    def __init__(self, response: _Response) -> None:
        super().__init__("asked to retry")
        self.response = response


def _result() -> RunResult:
    call = ToolCall("call_1", "book", {"city": "Paris", "nights": [1, 2]})
    response = ModelResponse("", (call,), Usage(input_tokens=3), "tool_calls", "m1")
    request = ModelRequest(
        Transcript([Message("user", "hi")]), (ToolSpec("book", "Book.", {"type": "object"}),)
    )
    pending = PendingRequest("p1", call, "book?", "a", "a", ("approve", "reject"))
    common: dict[str, Any] = {"agent": "a", "branch": "a", "time": 1.5}
    events = (
        UserMessageEvent(message=Message("user", "hi"), **common),
        ModelAttemptEvent(request=request, attempt=2, **common),
        ModelResponseEvent(response=response, **common),
        ToolCallEvent(call=call, **common),
        ToolAttemptEvent(call=call, **common),
        ToolResultEvent(call=call, result=ToolResult("ok", is_error=True), **common),
        ErrorEvent(error=ConnectionError("reset"), operation="tool", attempt=1, **common),
        RetryEvent(operation="tool", attempt=1, delay=0.25, changed=True, **common),
        FallbackEvent(operation="model", **common),
        AttemptDiscardedEvent(attempt=1, reason="failed", call_id="call_1", **common),
        StopEvent(reason="enough", **common),
        PauseEvent(request=pending, **common),
        ShadowEvent(
            point="before_tool",
            callback="Strict instance",
            live="cont",
            would="halt",
            tool="book",
            call_id="call_1",
            detail="Halt(ToolResult(...))",
            **common,
        ),
    )
    state = RunState(
        MappingProxyType({"count": 2, "seen": ["a"]}), "r1", "a", "u", "s", "completed"
    )
    return RunResult(
        "done",
        events,
        "paused",
        stop_reason="why",
        session_id="s",
        response=response,
        run_id="r1",
        state=state,
        usage=Usage(1, 2, 3, 4),
        pending=(pending,),
    )


def test_a_result_with_every_event_loads_back_equal() -> None:
    """A ``RunResult`` holding each kind of event, a state, a response and a pending request:
    its JSON loads back to the same events, state and fields."""
    result = _result()
    text = dump(result)
    json.loads(text)  # plain JSON
    copy = load(text)
    assert type(copy) is RunResult
    assert repr(copy.events[:6]) == repr(result.events[:6])
    assert copy.events[7:] == result.events[7:]
    attempt, failed = copy.events[1], copy.events[6]
    assert isinstance(attempt, ModelAttemptEvent)
    assert isinstance(failed, ErrorEvent)
    assert type(attempt.request.messages) is Transcript
    assert (type(failed.error), failed.error.args) == (ConnectionError, ("reset",))
    assert copy.state.to_json() == result.state.to_json()
    assert type(copy.state.data) is MappingProxyType
    assert (copy.output, copy.status, copy.usage, copy.pending, copy.response) == (
        "done",
        "paused",
        Usage(1, 2, 3, 4),
        result.pending,
        result.response,
    )


def test_plain_values_sessions_and_step_records_load_back_equal() -> None:
    """Tuples stay tuples, dicts dicts, read-only mappings read-only, bytes bytes."""
    session = Session((Message("user", "hi"),), 3, MappingProxyType({"k": [1, 2.5, None]}))
    values: tuple[object, ...] = (
        (ToolResult("ok"), 1.5),
        (None, 2.0),
        {"a": (1, "b"), "b": [True, {"c": b"\x00\xff"}]},
        MappingProxyType({"x": 1}),
        "text",
        [],
    )
    for value in values:
        copy = load(dump(value))
        assert copy == value
        assert type(copy) is type(value)
    copy = load(dump(session))
    assert (copy.messages, copy.version, dict(copy.state)) == (
        session.messages,
        3,
        {"k": [1, 2.5, None]},
    )


def test_what_has_no_json_form_is_a_type_error_naming_it_and_where() -> None:
    """A lock in a step's value, a date, a set, a key that is no string, a NaN: each a
    TypeError that names the value, where it was, and the opt-in."""
    with pytest.raises(TypeError, match=r"cannot store value\[0\]\['lock'\] = lock"):
        dump(({"lock": threading.Lock()}, 1.0))
    with pytest.raises(TypeError, match=r"value\.state\['when'\] = date.*allow_pickle=True"):
        dump(Session((), 1, MappingProxyType({"when": datetime.date(2026, 1, 1)})))
    with pytest.raises(TypeError, match=r"value = set"):
        dump({1, 2})
    with pytest.raises(TypeError, match="keys must be strings"):
        dump({1: "a"})
    with pytest.raises(TypeError, match="not a finite number"):
        dump(float("nan"))


def test_an_error_of_an_allowed_class_comes_back_as_itself() -> None:
    """Builtins' and the project's errors are rebuilt (without ``__init__``) with their args,
    JSON attributes and notes; what has no JSON form is left out."""
    error = ConnectionError("reset")
    error.add_note("attempt 1")
    copy = load(dump(error))
    assert (type(copy), copy.args, copy.__notes__) == (ConnectionError, ("reset",), ["attempt 1"])
    stop = load(dump(StopRun("enough")))
    assert (type(stop), stop.reason, str(stop)) == (StopRun, "enough", "enough")
    cut = ProviderError("stream cut", url="http://m", model="m", head=b"da", transient=True)
    again = load(dump(cut))
    assert (type(again), again.transient, again.head, str(again)) == (
        ProviderError,
        True,
        b"da",
        str(cut),
    )
    assert is_transient(again)
    nested = load(dump(ValueError("outer", KeyError("inner"))))
    assert type(nested.args[1]) is KeyError
    assert load(dump(ValueError(threading.Lock()))).args[0].startswith("<unlocked _thread.lock")


def test_an_error_of_another_class_is_a_recovered_error_that_classifies_alike() -> None:
    """A class off the allow-list comes back a ``RecoveredError`` with its type's name, message
    and JSON attributes, its response's status and headers, and ``is_transient`` deciding as
    it did on the original; given to ``json_codec``, the class comes back as itself."""
    error = KeywordOnly("slow down", status_code=429, headers={"retry-after": "2"})
    error.message = "slow down, please"  # type: ignore[attr-defined]  # as openai's errors have
    with pytest.raises(TypeError):
        pickle.loads(pickle.dumps(error))  # why 0.2 had a codec at all
    copy = load(dump(error))
    assert type(copy) is RecoveredError
    assert copy.type_name == f"{__name__}:KeywordOnly"
    assert (str(copy), copy.status_code, copy.headers) == ("slow down", 429, {"retry-after": "2"})  # type: ignore[attr-defined]
    assert not hasattr(copy, "lock")
    assert getattr(copy, "message", None) == "slow down, please"
    assert getattr(load(dump(copy)), "message", None) == "slow down, please"
    assert is_transient(copy) is is_transient(error) is True
    named = load(dump(APIConnectionError("gone")))
    assert type(named) is RecoveredError
    assert is_transient(named) is is_transient(APIConnectionError("gone")) is True
    assert is_transient(load(dump(KeyError("x")))) is False
    refused = WithResponse(_Response(500, {"x-should-retry": "false"}))
    again = load(dump(refused))
    assert again.response == StoredResponse(500, {"x-should-retry": "false"})
    assert is_transient(again) is is_transient(refused) is False
    assert load(dump(copy)).type_name == copy.type_name  # stored again: the same name
    own = json_codec(allowed([KeywordOnly])).load(dump(error))
    assert (type(own), own.status_code) == (KeywordOnly, 429)


def test_a_record_never_names_a_class_into_existence() -> None:
    """A forged error record naming ``os:system``, a class of a module not imported, or a
    non-error class: a ``RecoveredError``, and nothing was imported or called."""
    # antigravity opens a web browser when imported: nothing in the suite imports it.
    assert "antigravity" not in sys.modules
    for name in ("os:system", "subprocess:Popen", "antigravity:geohash", "builtins:object"):
        record = {
            "$t": "error",
            "v": {
                "type": name,
                "message": "m",
                "args": {"$t": "tuple", "v": ["ls"]},
                "attributes": {},
                "transient": False,
            },
        }
        copy = load(json.dumps(record))
        assert (type(copy), copy.type_name) == (RecoveredError, name)
    assert "antigravity" not in sys.modules


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (pickle.dumps(ToolResult("ok")), r"must be JSON text \(str\), got bytes"),
        ("not json", "must be JSON text"),
        ("NaN", "NaN is not JSON"),
        ('{"a": 1}', r'must be a tagged value \{"\$t": tag, "v": value\}'),
        ('{"$t": "Popen", "v": []}', r"must be a known tag .*got str 'Popen'"),
        ('{"$t": "tuple", "v": {}}', "must be an array"),
        ('{"$t": "ToolResult", "v": {"content": 1}}', r"content must be a string, got int 1"),
        ('{"$t": "ToolSpec", "v": {"name": "x"}}', "exactly the fields"),
        ('{"$t": "RunState", "v": "{}"}', "a RunState's JSON"),
        ('{"$t": "bytes", "v": "***"}', "base64"),
        ('{"$t": "error", "v": {"type": "builtins:ValueError"}}', "an error record with exactly"),
        ("[" * 300 + "]" * 300, "nested at most"),
        ("true", None),
        ('{"$t": "Session", "v": []}', "must be an object"),
        ('{"$t": "Session", "v": {"messages": 1}}', "exactly 'messages', 'version', 'state'"),
        (
            '{"$t": "Session", "v": {"messages": {"kind": "tuple", "items": []}, '
            '"version": "1", "state": {"$t": "dict", "v": []}}}',
            r"version must be an integer, got str '1'",
        ),
        (
            '{"$t": "Session", "v": {"messages": {"kind": "tuple", "items": []}, '
            '"version": 1, "state": {"$t": "tuple", "v": []}}}',
            "state must be a dict",
        ),
        ('{"$t": "ModelRequest", "v": {"messages": 1}}', "exactly 'messages', 'tools'"),
        (
            '{"$t": "ModelRequest", "v": {"messages": {"kind": "set", "items": []}, "tools": 1}}',
            "'kind'",
        ),
        (
            '{"$t": "ModelRequest", "v": {"messages": {"kind": "tuple", "items": []}, '
            '"tools": {"$t": "tuple", "v": [1]}}}',
            "a tuple of ToolSpec",
        ),
        (
            '{"$t": "error", "v": {"type": "builtins:ValueError", "message": "m", '
            '"args": [], "attributes": {}, "transient": false}}',
            r"args must be a tuple",
        ),
        (
            '{"$t": "error", "v": {"type": "builtins:ValueError", "message": "m", '
            '"args": {"$t": "tuple", "v": []}, "attributes": {}, "transient": 0}}',
            "transient must be a boolean",
        ),
        (
            '{"$t": "error", "v": {"type": 7, "message": "m", '
            '"args": {"$t": "tuple", "v": []}, "attributes": {}, "transient": false}}',
            "type must be a string",
        ),
    ],
)
def test_a_damaged_or_forged_record_is_a_value_error_saying_what_was_expected(
    blob: object, message: str | None
) -> None:
    """Each is refused with what was expected where, and what came (a bare JSON value
    that is no record at all is taken as itself: ``true`` is ``True``)."""
    if message is None:
        assert load(blob) is True
        return
    with pytest.raises(ValueError, match=message):
        load(blob)


def test_dbos_s_serializer_stores_inputs_and_stored_errors_as_json() -> None:
    """Workflow inputs (a message among them) and a ``StoredError`` go through DBOS's serializer
    as JSON and come back; anything but its JSON is a ValueError."""
    serializer = JSONSerializer()
    inputs: dict[str, object] = {"args": (Message("user", "hi"), "u", None), "kwargs": {}}
    assert serializer.deserialize(serializer.serialize(inputs)) == inputs
    error = stored(KeywordOnly("slow down", status_code=429, headers={}))
    assert str(error) == "KeywordOnly: slow down"
    again = serializer.deserialize(serializer.serialize(error))
    assert type(again) is StoredError
    assert load(again.blob).status_code == 429
    with pytest.raises(ValueError, match="must be JSON text"):
        serializer.deserialize("gASVAAAAAAAAAA==")  # base64 pickle, DBOS's default form


def test_pickle_is_the_opt_in_codec_and_reads_json_records_too() -> None:
    """``PICKLE`` (``allow_pickle=True``) stores what JSON cannot, and still loads JSON records."""
    lock_free = {"when": {1, 2}}
    assert PICKLE.load(PICKLE.dump(lock_free)) == lock_free
    error = KeywordOnly("slow down", status_code=429, headers={})
    assert PICKLE.load(PICKLE.dump(error)).status_code == 429
    assert PICKLE.load(dump(ToolResult("ok"))) == ToolResult("ok")


@settings(max_examples=150, deadline=None, database=None)
@given(
    conversation=st.lists(strategies.messages, max_size=5),
    response=strategies.responses,
    result=strategies.tool_results,
)
def test_messages_responses_and_results_with_parts_round_trip(
    conversation: list[Message], response: ModelResponse, result: ToolResult
) -> None:
    """Any record a durable run stores, parts and all (images' bytes, reasoning payloads
    byte for byte), loads back equal from its JSON text."""
    request = ModelRequest(tuple(conversation))
    for value in (request, response, result, tuple(conversation)):
        assert load(dump(value)) == value


def test_an_input_request_with_its_schema_and_question_round_trips() -> None:
    """A paused MCP question (kind "input", the answer's schema, the server's key and
    opaque state) is stored as JSON and comes back equal."""
    from runner import PendingRequest
    from runner._pause.pending import Question

    request = PendingRequest(
        "req_1",
        ToolCall("c1", "notes_delete", {"name": "x"}),
        "Delete x?",
        "ops",
        "ops",
        ("respond", "reject"),
        "input",
        {"type": "object", "properties": {"sure": {"type": "boolean"}}},
        Question("confirm", "v1.opaque"),
    )
    again = load(dump(request))
    assert again == request
    assert again.schema == request.schema
    assert again.question == Question("confirm", "v1.opaque")


class NeedsCode(Exception):
    """An error whose ``__new__`` takes no positional arguments, only ``code``."""

    def __new__(cls, *, code: int = 0) -> NeedsCode:
        error = super().__new__(cls)
        error.code = code
        return error

    def __init__(self, *, code: int = 0) -> None:
        super().__init__(f"code {code}")
        self.code = code


def test_pickle_refuses_what_it_cannot_pickle_naming_it_and_why() -> None:
    """A lock is no record: a ``TypeError`` naming its type and the pickle error."""
    with pytest.raises(TypeError, match=r"cannot store lock .*TypeError: .*keep what a run"):
        PICKLE.dump(threading.Lock())


@pytest.mark.parametrize("blob", [None, 3, bytearray(b"x"), ["{}"]], ids=repr)
def test_pickle_loads_only_bytes_or_json_text(blob: object) -> None:
    """Anything else is a ``ValueError`` saying what a record must be."""
    with pytest.raises(ValueError, match="a durable record must be bytes or JSON text"):
        PICKLE.load(blob)


def test_pickle_stores_an_error_of_a_local_class_as_a_runtime_error_naming_it() -> None:
    """A class pickle cannot name comes back as a ``RuntimeError`` with its name and state."""

    class Local(Exception):
        pass

    error = Local("gone")
    error.detail = 7  # type: ignore[attr-defined]
    error.lock = threading.Lock()  # type: ignore[attr-defined]
    back = PICKLE.load(PICKLE.dump(error))
    assert type(back) is RuntimeError
    assert back.args == (f"{Local.__module__}.{Local.__qualname__}: gone",)
    assert vars(back)["detail"] == 7
    assert not hasattr(back, "lock")


def test_pickle_stores_an_error_whose_args_or_new_refuse_what_it_was_given() -> None:
    """Args pickle cannot keep become the message; a ``__new__`` refusing args gets none."""
    unpicklable_args = ValueError(threading.Lock())
    back = PICKLE.load(PICKLE.dump(unpicklable_args))
    assert type(back) is ValueError
    assert back.args == (str(unpicklable_args),)
    coded = NeedsCode(code=5)
    again = PICKLE.load(PICKLE.dump(coded))
    assert type(again) is NeedsCode
    assert again.args == ("code 5",)
    assert again.code == 5
