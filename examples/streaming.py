"""Streaming: an answer printed piece by piece, tool calls shown as they start.

``python -m examples.streaming`` (``make demo`` runs it after the quickstart) asks a
scripted assistant two things over ``Runner.stream``. The model streams its text in
small chunks; the run's events arrive as they happen, and the consumer prints:

- the text as it is generated (``TextDelta``);
- each tool call as it starts (``ToolCallDelta`` with a name) and its result;
- a note when streamed text turned out not to be the answer (``AttemptDiscardedEvent``):
  the first attempt at the second question breaks off mid-sentence, an error hook
  retries it, and the consumer is told to drop what it showed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Final

from hooks import ErrorResult, Failure, ModelContext, ModelResponse, Retry
from runner import (
    Agent,
    AttemptDiscardedEvent,
    ModelChunk,
    ModelRequest,
    RetryPolicy,
    Rule,
    RunFinishedEvent,
    Runner,
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    ToolResultEvent,
)

QUESTIONS: Final = ("what is the weather in Paris?", "and tomorrow?")


def weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 18°C, light rain"


class Flaky:
    """A streaming model whose first answer about tomorrow breaks off mid-sentence."""

    def __init__(self) -> None:
        self.inner = ScriptedModel(
            rules=[
                Rule(r"weather in (?P<city>\w+)", tool="weather", args={"city": "{city}"}),
                Rule(r"tomorrow", reply="Tomorrow looks sunny in Paris, 21°C."),
                Rule(r"^(?P<city>\w+): (?P<report>.+)$", on="tool", reply="{city}: {report}."),
            ],
            chunk_size=6,
        )
        self.broken = False

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer whole (runs that do not stream)."""
        return self.inner.generate(request)

    async def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """Stream the scripted answer, but cut the first one about tomorrow short."""
        if "tomorrow" in request.messages[-1].content and not self.broken:
            self.broken = True
            yield TextDelta("Tomorrow it will be")
            msg = "the connection dropped mid-stream"
            raise ConnectionError(msg)
        async for chunk in self.inner.astream(request):
            yield chunk


class RetryOnce:
    """Retries a model call that failed mid-stream."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Try again."""
        return Retry(ctx)


def render(event: StreamEvent, out: Callable[[str], None]) -> None:
    """Show one stream event the way a terminal chat would."""
    match event:
        case TextDelta(text=text):
            out(text)
        case ToolCallDelta(name=str(name)):
            out(f"[calling {name}]")
        case ToolResultEvent(result=result):
            out(f" -> {result.content}\n           ")
        case AttemptDiscardedEvent():
            out(" [connection lost: discard that]\n           ")
        case RunFinishedEvent(result=result):
            out(f"\n  ({len(result.events)} events on record)\n")
        case _:
            pass  # the other events are on record; a chat window need not show them


async def chat(out: Callable[[str], None]) -> list[str]:
    """Ask both questions in one session, streaming each answer to ``out``."""
    answers: list[str] = []
    agent = Agent("assistant", Flaky(), tools=[weather])
    with Runner(agent, retry=RetryPolicy(max_attempts=2, base_delay=0)) as runner:
        for question in QUESTIONS:
            out(f"user: {question}\nassistant: ")
            async for event in runner.stream(question, session_id="s", callbacks=[RetryOnce()]):
                render(event, out)
                if isinstance(event, RunFinishedEvent):
                    answers.append(event.result.output)
    return answers


def main() -> None:
    """Chat, printing as the model writes."""
    print("hookline streaming -- Runner.stream, a scripted model in 6-character chunks\n")
    asyncio.run(chat(lambda text: print(text, end="", flush=True)))


if __name__ == "__main__":
    main()
