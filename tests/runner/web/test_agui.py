"""``runner.web.agui_app``: a hookline agent served to AG-UI clients, checked by the AG-UI
validator on real streams of an answer, a tool call, a paused run, a resumed run and an
error; and every refusal a hostile client can bring on."""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import httpx
import pytest
from ag_ui.core import ResumeEntry
from ag_ui_validate.transport import TransportOptions, validate_endpoint

from hooks import (
    Cont,
    Halt,
    ModelContext,
    Outcome,
    PausableResult,
    Pause,
    Reject,
    Respond,
    Result,
    StopRun,
    Success,
    ToolContext,
    ToolResult,
    shadow,
)
from runner import (
    Agent,
    InMemorySessions,
    Message,
    ModelRequest,
    ModelResponse,
    PendingRequest,
    Runner,
    RunState,
    ScriptedModel,
    SQLiteSessionStore,
    ToolCall,
)
from runner.web import AGUIApp, agui_app
from runner.web._agui_pause import Refusal, decisions, interrupts
from tests.helpers.agui import post, problems, resume_input, run_input, serving
from tests.helpers.runs import calling


class Files:
    """A ``delete_file`` tool that logs the paths it deleted."""

    def __init__(self) -> None:
        self.deleted: list[str] = []

    def tool(self) -> Any:
        def delete_file(path: str) -> str:
            """Delete a file."""
            self.deleted.append(path)
            return f"deleted {path}"

        return delete_file


class AskFirst:
    """Pauses every undecided ``delete_file`` call."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause an undecided delete; let the rest through."""
        if ctx.decision is None:
            return Pause(f"delete {ctx.call.args['path']}?")
        return Cont(ctx)


class Polite:
    """An output guard replacing every answer with a polite one."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Replace the answer's text."""
        if type(outcome) is Success and outcome.unwrap().text:
            return Success(ModelResponse("Certainly."))
        return outcome


def deleting(files: Files, *, pause: bool = True) -> AGUIApp:
    """An endpoint whose agent deletes ``a.txt`` (paused first unless ``pause`` is off)."""
    model = ScriptedModel(
        [calling(ToolCall("c1", "delete_file", {"path": "a.txt"})), "All cleaned up."],
        chunk_size=4,
    )
    callbacks = [AskFirst()] if pause else []
    return agui_app(Runner(Agent("files", model, tools=[files.tool()], callbacks=callbacks)))


def interrupt_of(frames: list[dict[str, Any]]) -> dict[str, Any]:
    """The one interrupt a paused run's ``RUN_FINISHED`` carries."""
    outcome = frames[-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    return dict(interrupt)


# -- the five streams the validator checks --------------------------------------------


def test_a_plain_answer_streams_as_one_text_message() -> None:
    """An answer is RUN_STARTED, one text message of the model's pieces, RUN_FINISHED with it."""
    app = agui_app(Runner(Agent("echo", ScriptedModel(["Hello there, friend."], chunk_size=5))))
    answer = post(app, run_input("hi"))
    assert (answer.status, answer.content_type.split(";")[0]) == (200, "text/event-stream")
    assert answer.types[0] == "RUN_STARTED"
    assert answer.types[1] == "TEXT_MESSAGE_START"
    assert answer.types[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert answer.types.count("TEXT_MESSAGE_CONTENT") == 4
    assert answer.text_of() == "Hello there, friend."
    assert answer.last["result"] == "Hello there, friend."
    assert (answer.last["threadId"], answer.last["runId"]) == ("t1", "r1")
    assert answer.frames[0]["metadata"]["hookline"]["agent"] == "echo"
    assert problems(answer.text) == []


def test_a_tool_call_streams_start_args_end_and_result() -> None:
    """A call the model made shows as TOOL_CALL_START/ARGS/END, then its result, then text."""
    files = Files()
    answer = post(deleting(files, pause=False), run_input("clean up"))
    calls = [f for f in answer.frames if f["type"].startswith("TOOL_CALL")]
    assert [f["type"] for f in calls] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_RESULT",
    ]
    assert calls[0]["toolCallName"] == "delete_file"
    assert json.loads(calls[1]["delta"]) == {"path": "a.txt"}
    assert (calls[3]["toolCallId"], calls[3]["content"]) == ("c1", "deleted a.txt")
    assert answer.text_of() == "All cleaned up."
    assert files.deleted == ["a.txt"]
    assert problems(answer.text) == []


def test_a_paused_run_finishes_with_an_interrupt_offering_approve_edit_reject() -> None:
    """The pause is an interrupt: its schema offers approve, edit (the tool's argument
    schema) and reject; the hook that paused is a hookline.hook event; nothing ran."""
    files = Files()
    answer = post(deleting(files), run_input("clean up"))
    interrupt = interrupt_of(answer.frames)
    assert interrupt["reason"] == "hookline.approval"
    assert interrupt["message"] == "delete a.txt?"
    assert interrupt["toolCallId"] == "c1"
    options = {
        o["properties"]["decision"]["const"]: o for o in interrupt["responseSchema"]["oneOf"]
    }
    assert list(options) == ["approve", "edit", "reject"]
    assert options["edit"]["properties"]["args"]["properties"] == {"path": {"type": "string"}}
    hooks = answer.custom("hookline.hook")
    assert [(h["point"], h["outcome"], h["callback"]) for h in hooks] == [
        ("before_tool", "pause", "AskFirst instance")
    ]
    assert "TOOL_CALL_START" in answer.types  # the waiting call is shown
    assert files.deleted == []
    assert problems(answer.text) == []


@pytest.mark.parametrize(
    ("payload", "deleted", "result"),
    [
        ({"decision": "approve"}, ["a.txt"], "deleted a.txt"),
        ({"decision": "edit", "args": {"path": "b.txt"}}, ["b.txt"], "deleted b.txt"),
        ({"decision": "reject", "message": "keep it"}, [], "keep it"),
        (None, [], "cancelled in the AG-UI client"),
    ],
)
def test_a_resume_goes_on_with_the_paused_run_as_decided(
    payload: dict[str, Any] | None, deleted: list[str], result: str
) -> None:
    """Approve runs the call, edit runs it with the new args, reject and cancel answer
    the model with an error; the run ends with the model's answer."""
    files = Files()
    app = deleting(files)
    interrupt = interrupt_of(post(app, run_input("clean up")).frames)
    answer = post(app, resume_input([(interrupt["id"], payload)]))
    assert answer.status == 200, answer.text
    (called,) = [f for f in answer.frames if f["type"] == "TOOL_CALL_RESULT"]
    assert result in called["content"]
    assert files.deleted == deleted
    assert answer.text_of() == "All cleaned up."
    assert (answer.last["type"], answer.last["runId"]) == ("RUN_FINISHED", "r2")
    assert problems(answer.text) == []


def test_a_failing_run_ends_with_run_error() -> None:
    """A model error after the start is RUN_ERROR naming it, the open message ended first."""
    app = agui_app(Runner(Agent("broken", ScriptedModel([RuntimeError("model down")]))))
    answer = post(app, run_input("hi"))
    assert answer.status == 200
    assert answer.types == ["RUN_STARTED", "RUN_ERROR"]
    assert answer.last["message"] == "RuntimeError: model down"
    assert answer.last["code"] == "RuntimeError"
    assert problems(answer.text) == []


# -- custom events ---------------------------------------------------------------------


def test_a_replaced_streamed_answer_is_discarded_by_message_id() -> None:
    """Streamed unheld, an answer an after_model hook replaced is a hookline.discard naming
    the message a UI drops, then the replacement as a message of its own."""
    agent = Agent("polite", ScriptedModel(["rude words"], chunk_size=4), callbacks=[Polite()])
    answer = post(agui_app(Runner(agent), hold="none"), run_input("hi"))
    (discard,) = answer.custom("hookline.discard")
    starts = [f["messageId"] for f in answer.frames if f["type"] == "TEXT_MESSAGE_START"]
    assert discard["messageId"] == starts[0]
    assert discard["reason"] == "replaced"
    assert answer.text_of() == "rude wordsCertainly."
    assert answer.last["result"] == "Certainly."
    assert problems(answer.text) == []


def test_held_by_default_a_replaced_answer_never_shows() -> None:
    """Under the default hold an agent with an output guard streams only the answer the
    guard passed: the replacement, no discard."""
    agent = Agent("polite", ScriptedModel(["rude words"], chunk_size=4), callbacks=[Polite()])
    answer = post(agui_app(Runner(agent)), run_input("hi"))
    assert answer.text_of() == "Certainly."
    assert answer.custom("hookline.discard") == []
    assert problems(answer.text) == []


class Strict:
    """A candidate policy: would halt every delete."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Halt a delete."""
        return Halt(ToolResult("deletes are off", is_error=True))


def test_a_shadows_differing_verdict_is_a_hookline_shadow_event() -> None:
    """Where a shadow would have decided otherwise, a hookline.shadow event says so; the
    live chain's decision stands."""
    files = Files()
    model = ScriptedModel([calling(ToolCall("c1", "delete_file", {"path": "a"})), "ok"])
    agent = Agent("files", model, tools=[files.tool()], callbacks=[shadow(Strict())])
    answer = post(agui_app(Runner(agent)), run_input("clean up"))
    (verdict,) = answer.custom("hookline.shadow")
    assert (verdict["point"], verdict["live"], verdict["would"]) == ("before_tool", "cont", "halt")
    assert (verdict["callback"], verdict["callId"]) == ("Strict instance", "c1")
    assert files.deleted == ["a"]
    assert problems(answer.text) == []


def test_without_hook_events_no_hookline_hook_is_sent() -> None:
    """``hook_events=False`` leaves the run unobserved: no hookline.hook events."""
    files = Files()
    model = ScriptedModel([calling(ToolCall("c1", "delete_file", {"path": "a.txt"}))])
    agent = Agent("files", model, tools=[files.tool()], callbacks=[AskFirst()])
    answer = post(agui_app(Runner(agent), hook_events=False), run_input("clean up"))
    assert answer.custom("hookline.hook") == []
    assert interrupt_of(answer.frames)["toolCallId"] == "c1"


# -- message history -------------------------------------------------------------------


def test_a_new_thread_takes_the_clients_history_as_its_start() -> None:
    """Earlier messages of a thread the server has not seen become its session's start:
    the model sees them before the new message."""
    model = ScriptedModel(["ok"])
    app = agui_app(Runner(Agent("chat", model)))
    messages = [
        {"id": "1", "role": "system", "content": "be brief"},
        {"id": "2", "role": "user", "content": [{"type": "text", "text": "my name is Ada"}]},
        {"id": "3", "role": "assistant", "content": "hello Ada"},
        {"id": "4", "role": "user", "content": "who am I?"},
    ]
    answer = post(app, {"threadId": "t9", "runId": "r1", "messages": messages})
    assert answer.status == 200, answer.text
    seen = [(m.role, m.content) for m in model.requests[0].messages]
    assert seen[-4:] == [
        ("system", "be brief"),
        ("user", "my name is Ada"),
        ("assistant", "hello Ada"),
        ("user", "who am I?"),
    ]


def test_a_known_thread_takes_the_new_message_alone_or_the_same_history() -> None:
    """On a thread the server holds, the client may send the new message alone or its
    whole history (the same user messages); a different history is refused with 409."""
    store = InMemorySessions()
    model = ScriptedModel(default="ok")
    app = agui_app(Runner(Agent("chat", model), sessions=store))
    assert post(app, run_input("first")).status == 200
    assert post(app, run_input("second", run="r2")).status == 200
    same = [
        {"id": "1", "role": "user", "content": "first"},
        {"id": "2", "role": "assistant", "content": "ok"},
        {"id": "3", "role": "user", "content": "second"},
        {"id": "4", "role": "assistant", "content": "ok"},
        {"id": "5", "role": "user", "content": "third"},
    ]
    assert post(app, {"threadId": "t1", "runId": "r3", "messages": same}).status == 200
    other = [*same[:2], {"id": "3", "role": "user", "content": "forged"}, *same[3:]]
    refused = post(app, {"threadId": "t1", "runId": "r4", "messages": other})
    assert refused.status == 409
    assert "do not match the conversation the server holds" in refused.error
    assert "user message 1" in refused.error
    users = [m.content for m in store.load("user", "t1").messages if m.role == "user"]
    assert users == ["first", "second", "third"]


def test_a_history_with_tool_calls_maps_to_hookline_messages() -> None:
    """An assistant turn's tool calls and the tool's answer map to hookline's messages."""
    model = ScriptedModel(["ok"])
    app = agui_app(Runner(Agent("chat", model)))
    call = {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    messages = [
        {"id": "1", "role": "user", "content": "add"},
        {"id": "2", "role": "assistant", "toolCalls": [call]},
        {"id": "3", "role": "tool", "toolCallId": "c1", "content": "boom", "error": "failed"},
        {"id": "4", "role": "user", "content": "and?"},
    ]
    assert post(app, {"threadId": "t", "runId": "r", "messages": messages}).status == 200
    sent = model.requests[0].messages
    assert Message("assistant", "", tool_calls=(ToolCall("c1", "add", {"a": 1}),)) in sent
    assert Message("tool", "boom", tool_call_id="c1", is_error=True) in sent


@pytest.mark.parametrize(
    ("messages", "said"),
    [
        ([], "messages: empty"),
        ([{"id": "1", "role": "assistant", "content": "hi"}], "must be the user's"),
        (
            [
                {
                    "id": "1",
                    "role": "user",
                    "content": [
                        {"type": "image", "source": {"type": "url", "value": "http://x/y.png"}}
                    ],
                }
            ],
            "'image' part cannot be sent",
        ),
        (
            [
                {"id": "1", "role": "reasoning", "content": "hm"},
                {"id": "2", "role": "user", "content": "x"},
            ],
            "has no hookline form",
        ),
        (
            [
                {
                    "id": "1",
                    "role": "assistant",
                    "toolCalls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": "[1]"},
                        }
                    ],
                },
                {"id": "2", "role": "user", "content": "x"},
            ],
            "arguments must be a JSON object",
        ),
        (
            [
                {
                    "id": "1",
                    "role": "assistant",
                    "toolCalls": [
                        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{"}}
                    ],
                },
                {"id": "2", "role": "user", "content": "x"},
            ],
            "arguments are not JSON",
        ),
    ],
)
def test_messages_with_no_hookline_form_are_refused_naming_them(
    messages: list[dict[str, Any]], said: str
) -> None:
    """What cannot map is 422 with a message saying what, and nothing runs."""
    model = ScriptedModel(default="ok")
    app = agui_app(Runner(Agent("chat", model)))
    answer = post(app, {"threadId": "t", "runId": "r", "messages": messages})
    assert answer.status == 422
    assert said in answer.error
    assert model.requests == []


def test_client_tools_are_refused() -> None:
    """Tools the client declares are refused: the endpoint runs the server agent's tools."""
    app = agui_app(Runner(Agent("chat", ScriptedModel(default="ok"))))
    tools = [{"name": "confirm", "description": "ask the user"}]
    answer = post(app, run_input("hi", tools=tools))
    assert answer.status == 422
    assert "'confirm'" in answer.error


# -- hostile requests ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "status", "said"),
    [
        (b"{not json", 400, "not JSON"),
        (b"\xff\xfe", 400, "not JSON"),
        (b"[1, 2]", 422, "must be a RunAgentInput object, got list"),
        (b'{"threadId": "t"}', 422, "runId: Field required"),
        (b'{"threadId": 1, "runId": "r", "messages": []}', 422, "threadId"),
        (b'{"threadId": "", "runId": "r", "messages": []}', 422, "must be non-empty"),
        (b'{"threadId": "t", "runId": "", "messages": []}', 422, "must be non-empty"),
    ],
)
def test_a_body_that_is_no_run_agent_input_is_refused(raw: bytes, status: int, said: str) -> None:
    """Bad JSON is 400; JSON that is no RunAgentInput is 422, naming the field."""
    app = agui_app(Runner(Agent("chat", ScriptedModel(default="ok"))))
    answer = post(app, None, raw=raw)
    assert answer.status == status
    assert said in answer.error


def test_only_post_is_served() -> None:
    """Another method is 405 with ``Allow: POST``."""
    app = agui_app(Runner(Agent("chat", ScriptedModel(default="ok"))))
    answer = post(app, None, raw=b"", method="GET")
    assert answer.status == 405
    assert "POST a RunAgentInput" in answer.error


def test_a_body_over_the_limit_is_refused() -> None:
    """A body over ``max_body`` bytes is 413."""
    app = agui_app(Runner(Agent("chat", ScriptedModel(default="ok"))), max_body=100)
    answer = post(app, run_input("x" * 200))
    assert answer.status == 413


def test_a_resume_of_a_run_resumed_already_is_refused_with_409() -> None:
    """A run goes on once: the second resume of the same interrupt is 409, saying why."""
    files = Files()
    app = deleting(files)
    interrupt = interrupt_of(post(app, run_input("clean up")).frames)
    body = resume_input([(interrupt["id"], {"decision": "approve"})])
    assert post(app, body).status == 200
    again = post(app, body)
    assert again.status == 409
    assert "is not waiting for a decision: it was resumed already" in again.error
    assert files.deleted == ["a.txt"]


def test_a_resume_of_an_unknown_run_is_refused_with_409() -> None:
    """An interrupt id naming no paused run of the store is 409: nothing to resume."""
    app = deleting(Files())
    answer = post(app, resume_input([("nope/req_1", {"decision": "approve"})]))
    assert answer.status == 409
    assert "'nope' is not waiting for a decision" in answer.error


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        (lambda i: [("no-slash", {"decision": "approve"})], "is not one this endpoint gave"),
        (
            lambda i: [(i, {"decision": "approve"}), ("other/req_2", {"decision": "approve"})],
            "answer 2 runs",
        ),
        (lambda i: [(i, {"decision": "approve"}), (i, {"decision": "approve"})], "answered twice"),
        (lambda i: [(i.rpartition("/")[0] + "/req_x", {"decision": "approve"})], "is not pending"),
        (lambda i: [(i, "approve")], "payload must be a JSON object, got str"),
        (lambda i: [(i, {"decision": "respond"})], "decision must be one of"),
        (lambda i: [(i, {"decision": "edit"})], "an edit needs args"),
        (lambda i: [(i, {"decision": "edit", "args": [1]})], "an edit needs args"),
        (lambda i: [(i, {"decision": "approve", "args": {}})], "unexpected keys ['args']"),
        (lambda i: [(i, {"decision": "reject", "message": 3})], "message must be a string"),
    ],
)
def test_decisions_that_do_not_fit_the_pending_requests_are_refused(
    answers: Any, said: str
) -> None:
    """Entries that answer another run, no pending request, one twice, or with a payload
    that does not fit are 422; the run still waits and a fitting resume then works."""
    files = Files()
    app = deleting(files)
    interrupt = interrupt_of(post(app, run_input("clean up")).frames)
    answer = post(app, resume_input(answers(interrupt["id"])))
    assert answer.status == 422
    assert said in answer.error
    assert files.deleted == []
    assert post(app, resume_input([(interrupt["id"], {"decision": "approve"})])).status == 200
    assert files.deleted == ["a.txt"]


def test_a_resume_from_another_thread_is_refused_with_409() -> None:
    """A resume must come on the thread the run paused in."""
    app = deleting(Files())
    interrupt = interrupt_of(post(app, run_input("clean up")).frames)
    answer = post(app, resume_input([(interrupt["id"], {"decision": "approve"})], thread="t2"))
    assert answer.status == 409
    assert "paused in another thread" in answer.error


def test_the_app_refuses_bad_arguments() -> None:
    """``agui_app`` checks what it is given."""
    runner = Runner(Agent("chat", ScriptedModel(default="ok")))
    with pytest.raises(TypeError, match="runner must be a Runner or a DurableRunner, got str"):
        agui_app("runner")  # type: ignore[arg-type]  # hostile
    with pytest.raises(ValueError, match="user_id must be a non-empty str"):
        agui_app(runner, user_id="")
    with pytest.raises(ValueError, match="max_body must be a positive int"):
        agui_app(runner, max_body=0)
    with pytest.raises(ValueError, match="hold must be"):
        agui_app(runner, hold="sometimes")  # type: ignore[arg-type]  # hostile


def test_a_resume_for_another_user_is_refused_with_409() -> None:
    """An endpoint serving another user cannot resume a run paused for this one."""
    files = Files()
    runner = Runner(
        Agent(
            "files",
            ScriptedModel([calling(ToolCall("c1", "delete_file", {"path": "a"}))]),
            tools=[files.tool()],
            callbacks=[AskFirst()],
        )
    )
    interrupt = interrupt_of(post(agui_app(runner), run_input("clean up")).frames)
    other = agui_app(runner, user_id="mallory")
    answer = post(other, resume_input([(interrupt["id"], {"decision": "approve"})]))
    assert answer.status == 409
    assert files.deleted == []


def test_a_run_paused_by_another_runner_on_the_same_file_resumes_here(tmp_path: Path) -> None:
    """With ``SQLiteSessionStore``, a run one runner paused (as another process would) is
    resumed by an endpoint over another runner on the same file; the state is the store's."""
    files = Files()
    model = ScriptedModel(
        [calling(ToolCall("c1", "delete_file", {"path": "a.txt"})), "All cleaned up."]
    )
    agent = Agent("files", model, tools=[files.tool()], callbacks=[AskFirst()])
    path = tmp_path / "sessions.db"
    with Runner(agent, sessions=SQLiteSessionStore(path)) as first:
        paused = first.run("clean up", session_id="t1")
    assert paused.status == "paused"
    interrupt = f"{paused.run_id}/{paused.pending[0].id}"
    with Runner(agent, sessions=SQLiteSessionStore(path)) as second:
        answer = post(agui_app(second), resume_input([(interrupt, {"decision": "approve"})]))
    assert answer.status == 200, answer.text
    assert answer.last["result"] == "All cleaned up."
    assert files.deleted == ["a.txt"]
    assert problems(answer.text) == []


def test_a_sub_agents_text_is_a_message_of_its_own() -> None:
    """A sub-agent's streamed answer is its own text message, inside its parent's call."""
    helper = Agent("helper", ScriptedModel(["from the helper"], chunk_size=4), description="Help.")
    model = ScriptedModel(
        [calling(ToolCall("c1", "helper", {"request": "help"})), "Done."], chunk_size=4
    )
    app = agui_app(Runner(Agent("boss", model, sub_agents=[helper])))
    answer = post(app, run_input("go"))
    texts: dict[str, str] = {}
    for frame in answer.frames:
        if frame["type"] == "TEXT_MESSAGE_CONTENT":
            texts[frame["messageId"]] = texts.get(frame["messageId"], "") + frame["delta"]
    assert list(texts.values()) == ["from the helper", "Done."]
    assert problems(answer.text) == []


def test_a_stopped_run_finishes_saying_why() -> None:
    """A run a callback stopped ends with RUN_FINISHED whose metadata says stopped and why."""

    class Stop:
        def before_model(self, ctx: ModelContext, /) -> Any:
            raise StopRun("closed for today")

    app = agui_app(Runner(Agent("shop", ScriptedModel(default="hi"), callbacks=[Stop()])))
    answer = post(app, run_input("hi"))
    assert answer.types == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]
    (hook,) = answer.custom("hookline.hook")
    assert (hook["point"], hook["outcome"]) == ("before_model", "raised")
    assert hook["error"] == "StopRun: closed for today"
    hookline = answer.last["metadata"]["hookline"]
    assert (hookline["status"], hookline["stopReason"]) == ("stopped", "closed for today")
    assert problems(answer.text) == []


# -- over a real socket ----------------------------------------------------------------


class Waiting:
    """A model that answers only once ``go`` is set; ``cancelled`` says it was cancelled."""

    def __init__(self) -> None:
        self.cancelled = threading.Event()
        self.started = threading.Event()

    async def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Wait (until cancelled)."""
        self.started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return ModelResponse("late")


def test_a_real_server_passes_the_validator_transport_rules_included() -> None:
    """Served by uvicorn on 127.0.0.1, a paused run and its resume pass ``validate_endpoint``
    (SSE framing, chunking and content type checked too)."""
    files = Files()
    with serving(deleting(files)) as url:
        paused = checked(url, run_input("clean up"))
        decided = resume_input([(interrupt_of(paused)["id"], {"decision": "approve"})])
        resumed = checked(url, decided)
    assert [f["type"] for f in resumed if f["type"] == "TOOL_CALL_RESULT"] == ["TOOL_CALL_RESULT"]
    assert files.deleted == ["a.txt"]


def checked(url: str, given: dict[str, Any]) -> list[dict[str, Any]]:
    """POST ``given`` to ``url`` through the validator's own client: its frames, once the
    validator found no error nor warning."""
    frames: list[dict[str, Any]] = []
    options = TransportOptions(
        input=given, timeout_ms=20_000, on_event=lambda raw, _: frames.append(json.loads(raw))
    )
    result = asyncio.run(validate_endpoint(url, options))
    diagnostics = result.report.diagnostics
    assert [d for d in diagnostics if d.severity in ("error", "warning")] == []
    assert result.transport_error is None
    assert (result.content_type or "").startswith("text/event-stream")
    return frames


def test_a_client_that_leaves_cancels_its_run() -> None:
    """Closing the connection mid-run cancels the run: the model's call is cancelled and
    nothing is saved to the thread's session."""
    model = Waiting()
    store = InMemorySessions()
    app = agui_app(Runner(Agent("slow", model), sessions=store))
    with serving(app) as url:
        with httpx.stream("POST", url, json=run_input("hi"), timeout=20) as response:
            first = next(response.iter_lines())
            assert first.startswith('data: {"type":"RUN_STARTED"')
            assert model.started.wait(10)
        assert model.cancelled.wait(10)
    assert store.load("user", "t1").messages == ()


# -- a tool's question (an MCP input request) ------------------------------------------

ASKED = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def question() -> PendingRequest:
    """A paused call's question, as an MCP server's elicitation leaves it."""
    call = ToolCall("c7", "signup", {})
    return PendingRequest(
        "req_q",
        call,
        "Your name?",
        "a",
        "a",
        allowed=("respond", "reject"),
        kind="input",
        schema=ASKED,
    )


def test_an_input_request_is_an_interrupt_under_the_schema_it_asked_with() -> None:
    """A tool's question is an interrupt whose response schema is the question's own."""
    (interrupt,) = interrupts("run9", [question()], lambda agent, tool: None)
    assert interrupt.id == "run9/req_q"
    assert (interrupt.reason, interrupt.message) == ("hookline.input", "Your name?")
    assert interrupt.response_schema == ASKED
    assert interrupt.tool_call_id == "c7"


def test_an_answered_input_request_is_respond_and_a_cancelled_one_reject() -> None:
    """The payload answering a question is ``Respond(payload)``; a cancelled entry rejects."""
    state = cast(RunState, SimpleNamespace(run_id="run9", pending=(question(),)))
    answered = ResumeEntry(interrupt_id="run9/req_q", status="resolved", payload={"name": "Ada"})
    assert decisions(state, [answered]) == {"req_q": Respond({"name": "Ada"})}
    cancelled = ResumeEntry(interrupt_id="run9/req_q", status="cancelled")
    assert decisions(state, [cancelled]) == {"req_q": Reject("cancelled in the AG-UI client")}
    with pytest.raises(Refusal, match="payload must be a JSON object, got list"):
        decisions(state, [ResumeEntry(interrupt_id="run9/req_q", status="resolved", payload=[])])


# -- the extra -------------------------------------------------------------------------


def test_without_the_extra_runner_web_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no ``ag_ui`` importable, importing ``runner.web`` names the install command."""
    for name in [n for n in sys.modules if n == "runner.web" or n.startswith("runner.web.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "ag_ui", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[web\]'") as raised:
        importlib.import_module("runner.web")
    assert raised.value.name == "ag_ui"


@pytest.mark.subprocess
def test_importing_runner_imports_nothing_of_the_web_extra() -> None:
    """``import hooks, runner`` loads neither ag_ui nor starlette nor uvicorn."""
    code = (
        "import sys, hooks, runner; "
        "print(sorted({'ag_ui', 'starlette', 'uvicorn', 'runner.web'} & set(sys.modules)))"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
