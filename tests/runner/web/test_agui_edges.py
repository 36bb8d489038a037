"""``runner.web.agui_app`` at the ASGI level and at its edges: scopes it does not serve,
the lifespan's stray messages, a client that leaves before its request is read or
talks on while it streams, a cancelled response, refusals at a run's start, and the
translation of records with no AG-UI frame."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator, MutableMapping
from typing import Any

import pytest

from hooks import ToolCall
from runner import (
    Agent,
    AttemptDiscardedEvent,
    InMemorySessions,
    InvalidDecisions,
    ResumeRefused,
    Runner,
    RunResult,
    ScriptedModel,
    SessionBusy,
    SessionConflict,
    StreamEvent,
    TextDelta,
    ToolCallEvent,
)
from runner.web import agui_app
from runner.web._agui import _durable, _started
from runner.web._agui_events import Translator
from runner.web._agui_pause import Refusal
from tests.helpers.agui import post, run_input
from tests.helpers.runs import calling

Message = MutableMapping[str, Any]


def chat() -> Runner:
    """A runner answering every message "ok"."""
    return Runner(Agent("chat", ScriptedModel(default="ok")))


def translator() -> Translator:
    """A translator for thread ``t1``, run ``r1``, no tool specs."""
    return Translator("t1", "r1", lambda agent, tool: None)


class Client:
    """An ASGI client: ``receive`` gives ``incoming`` in order, then waits until
    ``leave`` is set and says the client left; ``sent`` holds what the app sent."""

    def __init__(self, *incoming: Message) -> None:
        self.incoming = list(incoming)
        self.leave = asyncio.Event()
        self.sent: list[Message] = []
        self.body_sent = asyncio.Event()

    async def receive(self) -> Message:
        if self.incoming:
            return self.incoming.pop(0)
        await self.leave.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if message["type"] == "http.response.body":
            self.body_sent.set()

    @property
    def status(self) -> int:
        (start,) = [m for m in self.sent if m["type"] == "http.response.start"]
        status: int = start["status"]
        return status

    @property
    def body(self) -> str:
        return b"".join(m.get("body", b"") for m in self.sent[1:]).decode()


def http(method: str = "POST") -> Message:
    return {"type": "http", "method": method, "path": "/", "headers": []}


def request(body: object) -> Message:
    return {"type": "http.request", "body": json.dumps(body).encode(), "more_body": False}


def test_a_websocket_is_refused_naming_its_scope() -> None:
    """A websocket scope is a RuntimeError: the endpoint serves HTTP alone."""
    client = Client()
    with pytest.raises(RuntimeError, match="serves HTTP, not 'websocket'"):
        asyncio.run(agui_app(chat())({"type": "websocket"}, client.receive, client.send))
    assert client.sent == []


def test_the_lifespan_answers_startup_and_shutdown_past_stray_messages() -> None:
    """Startup and shutdown are completed; a message of another type is passed over."""
    client = Client(
        {"type": "lifespan.startup"},
        {"type": "lifespan.something"},
        {"type": "lifespan.shutdown"},
    )
    asyncio.run(agui_app(chat())({"type": "lifespan"}, client.receive, client.send))
    assert [m["type"] for m in client.sent] == [
        "lifespan.startup.complete",
        "lifespan.shutdown.complete",
    ]


def test_a_client_that_leaves_before_its_body_is_read_is_refused_with_400() -> None:
    """A disconnect before the request's end is 400, saying so; nothing runs."""
    client = Client(
        {"type": "http.request", "body": b'{"threadId"', "more_body": True},
        {"type": "http.disconnect"},
    )
    asyncio.run(agui_app(chat())(http(), client.receive, client.send))
    assert client.status == 400
    assert json.loads(client.body) == {"error": "the client left before its request was read"}


def test_a_client_talking_on_while_it_streams_gets_the_whole_run() -> None:
    """Messages the client sends while the run streams (not a disconnect) are passed
    over: the run streams to its end."""

    async def main() -> Client:
        client = Client(request(run_input("hi")), {"type": "http.request", "body": b""})
        await agui_app(chat())(http(), client.receive, client.send)
        client.leave.set()
        return client

    client = asyncio.run(main())
    assert client.status == 200
    assert '"type":"RUN_FINISHED"' in client.body
    assert client.sent[-1]["more_body"] is False


def test_a_response_cancelled_by_its_server_is_cancelled() -> None:
    """A cancel that is not the client leaving (the server stopping) goes on as
    CancelledError, the run stopped where it was: its tool never returned."""
    gate = asyncio.Event()
    returned: list[str] = []

    async def waiting(path: str) -> str:
        """Wait until the test says so."""
        await gate.wait()
        returned.append(path)  # pragma: no cover -- cancelled first
        return path  # pragma: no cover

    model = ScriptedModel([calling(ToolCall("c1", "waiting", {"path": "a"})), "done"])
    runner = Runner(Agent("slow", model, tools=[waiting]))

    async def main() -> Client:
        client = Client(request(run_input("go")))
        served = asyncio.create_task(agui_app(runner)(http(), client.receive, client.send))
        async with asyncio.timeout(60):  # a bound, not a measure: the tool waits for ever
            while '"TOOL_CALL_END"' not in client.body:
                await asyncio.sleep(0.01)
        served.cancel()
        with pytest.raises(asyncio.CancelledError):
            await served
        gate.set()
        client.leave.set()
        return client

    client = asyncio.run(main())
    assert client.status == 200
    assert "RUN_FINISHED" not in client.body
    assert returned == []


# -- refusals at a run's start -----------------------------------------------------------


def test_a_run_on_a_thread_another_run_holds_is_refused_with_409() -> None:
    """A thread whose session another owner leases is 409, naming the holder; the
    session is not touched."""
    store = InMemorySessions()
    store.acquire("user", "t1", owner="elsewhere", ttl=60)
    answer = post(
        agui_app(Runner(Agent("chat", ScriptedModel(default="ok")), sessions=store)),
        run_input("hi"),
    )
    assert answer.status == 409
    assert "elsewhere" in answer.error
    assert store.load("user", "t1").messages == ()


async def _failing(error: Exception) -> AsyncGenerator[StreamEvent, None]:
    before: list[StreamEvent] = []  # nothing: it fails at once
    for event in before:
        yield event  # pragma: no cover
    raise error


@pytest.mark.parametrize(
    ("error", "status", "said"),
    [
        (InvalidDecisions("r", missing=("req_1",)), 422, "no decision for pending request"),
        (ResumeRefused("r", "it moved on"), 409, "run 'r' cannot be resumed: it moved on"),
        (SessionBusy("u", "t1", holder="other"), 409, "other"),
        (
            SessionConflict("u", "t1", expected=1, found=2),
            409,
            r"was saved by another run \(version 2\)",
        ),
        (TypeError("not a message"), 422, "TypeError: not a message"),
        (ValueError("bad history"), 422, "ValueError: bad history"),
    ],
)
def test_a_stream_refused_at_its_start_is_a_refusal(
    error: Exception, status: int, said: str
) -> None:
    """What a stream raises before its start is a refusal: 422 a misfit, 409 a run or
    session taken elsewhere; before any event is sent."""
    with pytest.raises(Refusal, match=said) as refused:
        asyncio.run(_started(translator(), _failing(error), []))
    assert refused.value.status == status


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidDecisions("r", unknown=("req_9",)), 422),
        (ResumeRefused("r", "resumed already"), 409),
        (SessionBusy("u", "t1", holder="other"), 409),
    ],
)
def test_a_durable_run_refused_before_it_ran_is_a_refusal(error: Exception, status: int) -> None:
    """A durable run or resume refused is the refusal, with its message."""

    async def run() -> RunResult:
        raise error

    with pytest.raises(Refusal) as refused:
        asyncio.run(_durable(translator(), run(), "files"))
    assert refused.value.status == status
    assert str(refused.value) == str(error)


def test_a_failed_durable_run_closes_with_run_error() -> None:
    """A durable run that failed opens and closes at once: RUN_STARTED, RUN_ERROR naming it."""

    async def run() -> RunResult:
        raise OSError("disk full")

    served = asyncio.run(_durable(translator(), run(), "files"))
    assert '"type":"RUN_STARTED"' in served.opening
    assert served.events is None
    assert '"type":"RUN_ERROR"' in served.closing
    assert "OSError: disk full" in served.closing


# -- translation -------------------------------------------------------------------------


def test_empty_text_and_a_discard_of_nothing_open_send_no_text_frames() -> None:
    """An empty text piece opens no message; a discarded attempt whose text is not open
    ends nothing, and says which attempt it was."""
    made = translator()
    assert made.event(TextDelta(text="", agent="a", branch="a")) == ""
    frames = made.event(
        AttemptDiscardedEvent(agent="a", branch="a", time=0.0, attempt=2, reason="failed")
    )
    assert "TEXT_MESSAGE_END" not in frames
    (frame,) = [json.loads(line[6:]) for line in frames.splitlines() if line.startswith("data: ")]
    assert frame["name"] == "hookline.discard"
    assert (frame["value"]["messageId"], frame["value"]["attempt"]) == (None, 2)


def test_arguments_json_cannot_hold_are_sent_as_their_text() -> None:
    """A tool call whose arguments hold a value JSON cannot write sends each as its repr."""
    call = ToolCall("c1", "store", {"data": b"\x00", "n": 1})
    frames = translator().event(ToolCallEvent(agent="a", branch="a", time=0.0, call=call))
    args = [json.loads(line[6:]) for line in frames.splitlines() if '"TOOL_CALL_ARGS"' in line]
    assert json.loads(args[0]["delta"]) == {"data": "b'\\x00'", "n": "1"}


def test_a_tool_spec_is_looked_up_in_the_agent_that_named_it() -> None:
    """The endpoint finds a tool's spec in its own agent's tools, a sub-agent's included;
    an agent or tool it does not have has none."""

    def delete_file(path: str) -> str:
        """Delete a file."""
        return path  # pragma: no cover -- never called

    worker = Agent("worker", ScriptedModel(default="ok"), tools=[delete_file], description="Works.")
    lead = Agent("lead", ScriptedModel(default="ok"), sub_agents=[worker])
    app = agui_app(Runner(lead))
    spec = app._spec("worker", "delete_file")  # pyright: ignore[reportPrivateUsage]
    assert spec is not None
    assert spec.name == "delete_file"
    assert app._spec("worker", "rm") is None  # pyright: ignore[reportPrivateUsage]
    assert app._spec("nobody", "delete_file") is None  # pyright: ignore[reportPrivateUsage]
