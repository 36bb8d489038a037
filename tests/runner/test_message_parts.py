"""Message parts through a run: images and files in, reasoning carried back, nothing lost.

A user's image reaches the model and the hooks; a response's reasoning rides on its
assistant message into the next request, the session store (both kinds), a paused
run's ``RunState`` JSON and a stream; a tool's image comes back as a part of its tool
message; telemetry shows parts by their visible content, never a reasoning payload.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path

import pytest

from hooks import Approve, Cont, PausableResult, Pause
from runner import (
    Agent,
    FilePart,
    ImagePart,
    InMemorySessions,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    ReasoningPart,
    Runner,
    RunState,
    ScriptedModel,
    SessionStore,
    SQLiteSessionStore,
    ToolCall,
    ToolContext,
    ToolResult,
)
from tests.helpers.runs import Mode, drive
from tests.helpers.spans import Traced, attributes

PIXEL = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
IMAGE = ImagePart(data=PIXEL, media_type="image/png")
PDF = FilePart(url="https://example.test/report.pdf", media_type="application/pdf", name="r")
THOUGHT = ReasoningPart(
    "openai",
    '{"type": "reasoning", "id": "rs_1", "encrypted_content": "gAAA...", "summary": []}',
    "add the numbers",
)


def show(a: int) -> ImagePart:
    """Return a picture of ``a``."""
    return ImagePart(url=f"https://example.test/{a}.png")


class Seen:
    """Keeps the user messages ``before_model`` saw."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        """Keep the request's first message."""
        self.messages.append(ctx.request.messages[0])
        return Cont(ctx)


def thinking_model() -> ScriptedModel:
    """Asks for ``show`` with its reasoning, then answers."""
    return ScriptedModel(
        [
            ModelResponse(tool_calls=(ToolCall("c1", "show", {"a": 2}),), parts=(THOUGHT,)),
            "done",
        ]
    )


def test_a_users_image_and_file_reach_the_hooks_and_the_model(mode: Mode) -> None:
    """The message given to the run is what the hooks and the model get, parts and all."""
    seen = Seen()
    model = ScriptedModel(["I see it"])
    message = Message("user", "what is this?", parts=(IMAGE, PDF))
    with Runner(Agent("a", model)) as runner:
        result = drive(runner, mode, message, callbacks=[seen])
    assert result.output == "I see it"
    assert seen.messages == [message]
    assert model.requests[0].messages[0].parts == (IMAGE, PDF)


def test_reasoning_rides_on_the_assistant_message_into_the_next_request(mode: Mode) -> None:
    """The response's reasoning part is on its assistant message, which the next request
    carries unchanged; the tool's image comes back as a part of its tool message."""
    model = thinking_model()
    with Runner(Agent("a", model, tools=[show])) as runner:
        result = drive(runner, mode, "show me two")
    assert result.output == "done"
    _, assistant, tool = model.requests[1].messages
    assert assistant.parts == (THOUGHT,)
    assert assistant.parts[0].payload == THOUGHT.payload  # byte for byte
    assert tool == Message(
        "tool",
        "",
        tool_call_id="c1",
        name="show",
        parts=(ImagePart(url="https://example.test/2.png"),),
    )


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_parts_survive_the_session_store(kind: str, tmp_path: Path, mode: Mode) -> None:
    """Saved and loaded again (by a new runner on the same store), every part is equal."""
    store: SessionStore = (
        InMemorySessions() if kind == "memory" else SQLiteSessionStore(tmp_path / "s.db")
    )
    message = Message("user", "look", parts=(IMAGE,))
    with Runner(Agent("a", thinking_model(), tools=[show]), sessions=store) as runner:
        first = drive(runner, mode, message)
    model = ScriptedModel(["again"])
    with Runner(Agent("a", model), sessions=store) as runner:
        drive(runner, mode, "and now?", session_id=first.session_id)
    history = model.requests[0].messages
    assert history[0] == message
    assert history[1].parts == (THOUGHT,)
    assert history[2].parts == (ImagePart(url="https://example.test/2.png"),)


class Ask:
    """Pauses every ``show`` call until a human decided."""

    def before_tool(self, ctx: ToolContext) -> PausableResult[ToolContext, ToolResult]:
        """Pause ``show`` once."""
        if ctx.decision is None:
            return Pause("show it?")
        return Cont(ctx)


def test_parts_survive_a_paused_runs_json_state(mode: Mode) -> None:
    """Paused, written as JSON, read back and resumed: the reasoning is in the request
    after the resume, byte for byte, and the user's image too."""
    model = thinking_model()
    message = Message("user", "look", parts=(IMAGE,))
    with Runner(Agent("a", model, tools=[show])) as runner:
        paused = drive(runner, mode, message, callbacks=[Ask()])
        assert paused.state is not None
        text = paused.state.to_json()
        assert json.loads(text)  # plain JSON
        state = RunState.from_json(text)
        decisions = {request.id: Approve() for request in state.pending}
        if mode == "sync":
            result = runner.resume(state, decisions, callbacks=[Ask()])
        else:
            result = asyncio.run(runner.aresume(state, decisions, callbacks=[Ask()]))
    assert result.output == "done"
    first, assistant, _ = model.requests[1].messages
    assert first == message
    assert assistant.parts == (THOUGHT,)


def test_a_streamed_run_keeps_the_responses_parts() -> None:
    """The final response of a stream carries its parts to the history."""
    model = thinking_model()

    async def main() -> None:
        with Runner(Agent("a", model, tools=[show])) as runner:
            async for _ in runner.stream("show me"):
                pass

    asyncio.run(main())
    assert model.requests[1].messages[1].parts == (THOUGHT,)


def test_telemetry_shows_parts_by_their_visible_content(mode: Mode) -> None:
    """Content capture: an image as a blob or a URI, reasoning by its summary; the
    reasoning payload (encrypted, signed) is never on a span."""
    traced = Traced()
    message = Message("user", "look", parts=(IMAGE, PDF))
    with traced.runner(Agent("a", thinking_model(), tools=[show]), capture_content=True) as r:
        drive(r, mode, message)
    first, second = traced.named("chat scripted")
    inputs = json.loads(str(attributes(first)["gen_ai.input.messages"]))
    assert inputs[0]["parts"][1:] == [
        {
            "type": "blob",
            "modality": "image",
            "content": "iVBORw0KGgoAAAANSUhEUg==",
            "mime_type": "image/png",
        },
        {
            "type": "uri",
            "modality": "document",
            "uri": "https://example.test/report.pdf",
            "mime_type": "application/pdf",
        },
    ]
    outputs = json.loads(str(attributes(first)["gen_ai.output.messages"]))
    assert outputs[0]["parts"][0] == {"type": "reasoning", "content": "add the numbers"}
    later = json.loads(str(attributes(second)["gen_ai.input.messages"]))
    assert later[1]["parts"][0] == {"type": "reasoning", "content": "add the numbers"}
    assert later[2]["parts"][1] == {
        "type": "uri",
        "modality": "image",
        "uri": "https://example.test/2.png",
    }
    everything = json.dumps([dict(attributes(span)) for span in traced.spans()])
    assert "encrypted_content" not in everything


def test_a_request_is_built_with_parts_by_a_hook() -> None:
    """A hook adds an image to the request with ``replace``: the model gets it."""

    class AddPicture:
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            first = replace(ctx.request.messages[0], parts=(IMAGE,))
            request = ModelRequest((first, *ctx.request.messages[1:]), ctx.request.tools)
            return Cont(replace(ctx, request=request))

    model = ScriptedModel(["ok"])
    with Runner(Agent("a", model)) as runner:
        runner.run("look", callbacks=[AddPicture()])
    assert model.requests[0].messages[0].parts == (IMAGE,)
