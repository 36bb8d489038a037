"""Telemetry: the spans of a run -- names, kinds, parents and attributes, in every run form."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from hooks import BeforeResult, Cont, Halt, ToolResult
from runner import (
    Agent,
    DeltaContext,
    ModelChunk,
    ModelRequest,
    ModelResponse,
    RunFinishedEvent,
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from tests.helpers.runs import Mode, add, calling
from tests.helpers.spans import Traced, attributes, hook_events

ADD = ToolCall("c1", "add", {"a": 2, "b": 3})


def calculator(*script: ModelResponse | str | Exception) -> Agent:
    """An agent with the ``add`` tool answering from ``script``."""
    return Agent("calculator", ScriptedModel(script), tools=[add])


def test_a_run_is_an_agent_span_over_chat_and_tool_spans(traced: Traced, mode: Mode) -> None:
    """invoke_agent (INTERNAL) is the root; each model call is a chat span (CLIENT) and the
    tool call an execute_tool span (INTERNAL), all children of the agent's, one trace."""
    traced.run(calculator(calling(ADD), "It is 5."), mode)
    agent = traced.one("invoke_agent calculator")
    chats = traced.named("chat scripted")
    tool = traced.one("execute_tool add")
    assert agent.kind is SpanKind.INTERNAL
    assert [chat.kind for chat in chats] == [SpanKind.CLIENT, SpanKind.CLIENT]
    assert tool.kind is SpanKind.INTERNAL
    assert traced.parent(agent) is None
    assert traced.children(agent) == [chats[0], tool, chats[1]]
    assert {span.context.trace_id for span in traced.spans()} == {agent.context.trace_id}


def test_the_agent_span_names_the_agent_the_run_and_the_session(traced: Traced, mode: Mode) -> None:
    """invoke_agent carries the GenAI agent attributes and hookline's run id and branch."""
    result = traced.run(calculator("hello"), mode)
    assert attributes(traced.one("invoke_agent calculator")) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.provider.name": "hookline",
        "gen_ai.agent.name": "calculator",
        "gen_ai.agent.description": "Ask the calculator agent.",
        "gen_ai.request.model": "scripted",
        "gen_ai.conversation.id": result.session_id,
        "hookline.run.id": result.run_id,
        "hookline.agent.branch": "calculator",
    }


def test_what_sampling_needs_is_given_at_span_start(traced: Traced, mode: Mode) -> None:
    """The sampler sees operation, provider, agent and request model as each span starts."""
    traced.run(calculator(calling(ADD), "It is 5."), mode)
    seen = traced.sampler.seen
    (agent,) = seen["invoke_agent calculator"]
    assert agent["gen_ai.operation.name"] == "invoke_agent"
    assert (agent["gen_ai.agent.name"], agent["gen_ai.provider.name"]) == ("calculator", "hookline")
    assert agent["gen_ai.request.model"] == "scripted"
    for chat in seen["chat scripted"]:
        assert chat["gen_ai.operation.name"] == "chat"
        assert (chat["gen_ai.provider.name"], chat["gen_ai.request.model"]) == (
            "hookline",
            "scripted",
        )
    (tool,) = seen["execute_tool add"]
    assert (tool["gen_ai.operation.name"], tool["gen_ai.tool.name"]) == ("execute_tool", "add")


def test_a_chat_span_says_what_the_model_answered(traced: Traced, mode: Mode) -> None:
    """Response model, finish reasons and tokens (cached and reasoning parts too)."""
    usage = Usage(input_tokens=120, output_tokens=30, cached_tokens=100, reasoning_tokens=12)
    reply = ModelResponse("hi", usage=usage, finish_reason="stop", model="scripted-2026")
    traced.run(calculator(reply), mode)
    chat = attributes(traced.one("chat scripted"))
    assert chat["gen_ai.response.model"] == "scripted-2026"
    assert chat["gen_ai.response.finish_reasons"] == ("stop",)
    assert (chat["gen_ai.usage.input_tokens"], chat["gen_ai.usage.output_tokens"]) == (120, 30)
    assert chat["gen_ai.usage.cache_read.input_tokens"] == 100
    assert chat["gen_ai.usage.reasoning.output_tokens"] == 12
    assert chat["hookline.attempt"] == 1
    assert "gen_ai.request.stream" not in chat  # unset: not streamed


def test_a_chat_span_leaves_out_what_the_model_did_not_say(traced: Traced, mode: Mode) -> None:
    """No usage, finish reason or response model: none of their attributes."""
    traced.run(calculator("hi"), mode)
    chat = attributes(traced.one("chat scripted"))
    assert not {key for key in chat if key.startswith(("gen_ai.usage", "gen_ai.response"))}


def test_the_agent_span_sums_the_runs_usage(traced: Traced, mode: Mode) -> None:
    """invoke_agent carries the tokens of every model call of the turn: the run's usage."""
    first = ModelResponse(tool_calls=(ADD,), usage=Usage(10, 2, cached_tokens=4))
    result = traced.run(calculator(first, ModelResponse("5", usage=Usage(15, 3))), mode)
    agent = attributes(traced.one("invoke_agent calculator"))
    assert result.usage == Usage(25, 5, cached_tokens=4)
    assert (agent["gen_ai.usage.input_tokens"], agent["gen_ai.usage.output_tokens"]) == (25, 5)
    assert agent["gen_ai.usage.cache_read.input_tokens"] == 4


def test_a_tool_span_names_the_tool_and_the_call(traced: Traced, mode: Mode) -> None:
    """execute_tool carries the tool's name, description and type, the call id, the attempt."""
    traced.run(calculator(calling(ADD), "It is 5."), mode)
    assert attributes(traced.one("execute_tool add")) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "add",
        "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.description": "Add two integers.",
        "hookline.attempt": 1,
    }


def test_a_sub_agent_runs_under_its_parents_tool_span(traced: Traced, mode: Mode) -> None:
    """The sub-agent's invoke_agent span is a child of the execute_tool span that called it,
    its own chat span under it; its tokens count towards the parent's."""
    helper = Agent("helper", ScriptedModel([ModelResponse("42", usage=Usage(7, 1))]))
    ask = ToolCall("c9", "helper", {"request": "the answer?"})
    boss = Agent(
        "boss",
        ScriptedModel([calling(ask), ModelResponse("It is 42.", usage=Usage(20, 4))]),
        sub_agents=[helper],
    )
    traced.run(boss, mode)
    tool = traced.one("execute_tool helper")
    sub = traced.one("invoke_agent helper")
    assert traced.parent(tool) == traced.one("invoke_agent boss")
    assert traced.parent(sub) == tool
    assert [span.name for span in traced.children(sub)] == ["chat scripted"]
    assert attributes(sub)["hookline.agent.branch"] == "boss/helper"
    assert attributes(sub)["gen_ai.usage.input_tokens"] == 7
    assert attributes(traced.one("invoke_agent boss"))["gen_ai.usage.input_tokens"] == 27


def test_the_run_nests_under_the_callers_span(traced: Traced, mode: Mode) -> None:
    """A span the application made current is the agent span's parent."""
    tracer = traced.provider.get_tracer("app")
    with tracer.start_as_current_span("request"):
        traced.run(calculator("hi"), mode)
    assert traced.parent(traced.one("invoke_agent calculator")) == traced.one("request")


class Slow:
    """An async tool that sleeps, so concurrent calls overlap, and traces its own work."""

    name = "slow"

    def __init__(self, provider: trace.TracerProvider) -> None:
        self.tracer = provider.get_tracer("tool")
        self.running = 0
        self.overlapped = False

    async def run(self, args: dict[str, object]) -> str:
        """Make a span of its own, sleep inside it, answer with the call's ``n``."""
        with self.tracer.start_as_current_span(f"work {args['n']}"):
            self.running += 1
            await asyncio.sleep(0.01)
            self.overlapped |= self.running > 1
            self.running -= 1
        return str(args["n"])


def test_concurrent_tool_calls_each_run_under_their_own_span(traced: Traced) -> None:
    """In arun the calls of one response run at once; each call's own span (and a
    span the tool makes) is under it, every call span under the agent's."""
    slow = Slow(traced.provider)
    calls = [ToolCall(f"c{n}", "slow", {"n": n}) for n in range(3)]
    agent = Agent("worker", ScriptedModel([calling(*calls), "done"]), tools=[slow])
    traced.run(agent, "async")
    assert slow.overlapped
    spans = traced.named("execute_tool slow")
    assert [attributes(span)["gen_ai.tool.call.id"] for span in spans] == ["c0", "c1", "c2"]
    for n, span in enumerate(spans):
        assert traced.parent(span) == traced.one("invoke_agent worker")
        assert traced.children(span) == [traced.one(f"work {n}")]


def test_a_sync_tool_on_a_worker_thread_keeps_its_call_span_current(traced: Traced) -> None:
    """In arun a sync tool runs on the pool; a span it makes is still its call's child."""
    tracer = traced.provider.get_tracer("tool")
    threads: list[str] = []

    def lookup(key: str) -> str:
        """Look ``key`` up."""
        threads.append(threading.current_thread().name)
        with tracer.start_as_current_span("lookup work"):
            return key.upper()

    call = ToolCall("c1", "lookup", {"key": "k"})
    traced.run(Agent("finder", ScriptedModel([calling(call), "K"]), tools=[lookup]), "async")
    assert threads[0].startswith("hookline-tool")
    assert traced.parent(traced.one("lookup work")) == traced.one("execute_tool lookup")


class Streaming:
    """A model that streams its answer in two pieces."""

    provider = "test"
    model = "streamer"

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The whole answer."""
        return ModelResponse("Hello there", usage=Usage(3, 2))

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """Two text pieces, then the response."""
        yield TextDelta("Hello ")
        await asyncio.sleep(0)  # as a network stream waits between pieces
        yield TextDelta("there")
        yield ModelResponse("Hello there", usage=Usage(3, 2))


def test_a_streamed_run_is_traced_with_the_stream_flag(traced: Traced) -> None:
    """Runner.stream makes the same spans; the chat span says the request was streamed."""

    async def consume() -> list[StreamEvent]:
        with traced.runner(Agent("talker", Streaming())) as runner:
            return [event async for event in runner.stream("hi")]

    events = asyncio.run(consume())
    assert isinstance(events[-1], RunFinishedEvent)
    chat = traced.one("chat streamer")
    assert attributes(chat)["gen_ai.request.stream"] is True
    assert attributes(chat)["gen_ai.provider.name"] == "test"
    assert traced.parent(chat) == traced.one("invoke_agent talker")


def test_the_consumer_of_a_stream_keeps_its_own_current_span(traced: Traced) -> None:
    """Between the stream's items the consumer's code runs in its own context: a span it
    makes there is a child of its span, not of the run's chat span."""
    tracer = traced.provider.get_tracer("app")

    async def consume() -> None:
        with (
            tracer.start_as_current_span("request"),
            traced.runner(Agent("talker", Streaming())) as runner,
        ):
            async for event in runner.stream("hi"):
                if isinstance(event, TextDelta):
                    with tracer.start_as_current_span(f"show {event.text.strip()}"):
                        pass

    asyncio.run(consume())
    request = traced.one("request")
    assert traced.parent(traced.one("show Hello")) == request
    assert traced.parent(traced.one("show there")) == request
    assert traced.parent(traced.one("invoke_agent talker")) == request


class StopAtThere:
    """A stream hook that ends the model call at the delta "there"."""

    def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """Halt with a short answer at "there", pass the rest."""
        if isinstance(ctx.delta, TextDelta) and ctx.delta.text == "there":
            return Halt(ModelResponse("Hello."))
        return Cont(ctx)


def test_a_stream_hooks_halt_is_an_event_on_the_streaming_chat_span(traced: Traced) -> None:
    """on_delta runs inside the model attempt: its halt shows on that attempt's span."""

    async def consume() -> list[StreamEvent]:
        with traced.runner(Agent("talker", Streaming())) as runner:
            return [event async for event in runner.stream("hi", callbacks=[StopAtThere()])]

    events = asyncio.run(consume())
    last = events[-1]
    assert isinstance(last, RunFinishedEvent)
    assert last.result.output == "Hello."
    (event,) = hook_events(traced.one("chat streamer"))
    assert (event["hookline.hook.point"], event["hookline.hook.decision"]) == ("on_delta", "halt")


class Stalling:
    """A streaming model that sends one piece, then waits for ever."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The whole answer (unused)."""
        return ModelResponse("Hello")

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """One piece, then a wait nobody ends."""
        yield TextDelta("Hello")
        await asyncio.Event().wait()
        yield ModelResponse("Hello")


def test_a_stream_closed_early_ends_every_span(traced: Traced) -> None:
    """A consumer that stops reading cancels the run: the spans it started still end."""

    async def first_delta() -> None:
        with traced.runner(Agent("talker", Stalling())) as runner:
            stream = runner.stream("hi")
            async for event in stream:
                if isinstance(event, TextDelta):
                    break
            await stream.aclose()

    asyncio.run(first_delta())
    assert sorted(traced.names()) == ["chat Stalling", "invoke_agent talker"]
    for span in traced.spans():  # cancelled: the operations did not complete
        assert attributes(span)["error.type"] == "CancelledError"


def test_every_span_ends(traced: Traced, mode: Mode) -> None:
    """A run leaves no span open: every one it started is exported, once."""
    traced.run(calculator(calling(ADD), calling(ADD), "done"), mode)
    started = sum(len(seen) for seen in traced.sampler.seen.values())
    assert started == len(traced.spans()) == 6


def test_a_tool_result_that_reports_an_error_is_no_span_error(traced: Traced, mode: Mode) -> None:
    """A tool that returns an error result ran fine: its span's status stays unset."""

    def check(value: int) -> ToolResult:
        """Check ``value``."""
        return ToolResult(f"{value} is out of range", is_error=True)

    call = ToolCall("c1", "check", {"value": 7})
    traced.run(Agent("checker", ScriptedModel([calling(call), "ok"]), tools=[check]), mode)
    assert traced.one("execute_tool check").status.status_code.name == "UNSET"
