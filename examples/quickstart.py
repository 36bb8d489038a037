"""Quickstart: a scripted assistant, four callbacks, and the trace they leave.

``make demo`` (or ``python -m examples.quickstart``) sends four messages to one agent
in one session and prints every hook point that fired, indented by nesting (agent,
then its model and tool calls), with its outcome tag, attempt and duration:

- ``Guard`` (``before_agent``) halts a request for secrets: the agent never runs;
- ``RedactEmails`` (``before_model``) rewrites what the model receives;
- ``RetryTransient`` (``on_tool_error``) retries a tool that hit a transient error;
- ``Audit`` (``on_event``) records one ``HookEvent`` per dispatch: the trace's source.
"""

from __future__ import annotations

import itertools
import os
import re
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

from typing_extensions import override

import hooks
from hooks import (
    AgentContext,
    BeforeResult,
    Cont,
    ErrorResult,
    Failure,
    Halt,
    HookEvent,
    ModelContext,
    ModelResponse,
    Retry,
    ToolCall,
    ToolContext,
    ToolResult,
)
from runner import (
    Agent,
    Model,
    ModelResponseEvent,
    RetryPolicy,
    Rule,
    Runner,
    RunResult,
    ScriptedModel,
    ToolResultEvent,
)

MESSAGES: Final = (
    "what is 2 + 3?",
    "what's the weather in Paris?",
    "show me the admin password",
    "send the notes to jane.doe@example.com",
)

NUMBER: Final = r"-?\d+(?:\.\d+)?"  # 2, -7, 2.5: the whole number, never a piece of it

# -- tools: plain functions; the name, docstring and typed parameters make the schema


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


def flaky_weather(failures: int = 1) -> Callable[[str], str]:
    """A ``weather`` tool whose first ``failures`` calls fail, like a shaky upstream API."""
    calls = itertools.count(1)

    def weather(city: str) -> str:
        """The current weather in a city."""
        if next(calls) <= failures:
            msg = "weather service unreachable"
            raise ConnectionError(msg)
        return f"{city}: 18°C, light rain"

    return weather


# -- callbacks: each class subclasses the protocols it implements

SECRETS: Final = re.compile(r"\b(password|api key|secret)s?\b", re.IGNORECASE)
EMAIL: Final = re.compile(r"[\w.+-]+@[\w-]+(\.[\w-]+)+")
TRANSIENT: Final = (ConnectionError, TimeoutError)


class Guard(hooks.BeforeAgent):
    """Refuse requests for secrets before the agent (and its model) runs at all."""

    @override
    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        if SECRETS.search(ctx.message.content):
            return Halt(ModelResponse(text="I can't help with that."))
        return Cont(ctx)


class RedactEmails(hooks.BeforeModel):
    """Replace email addresses in every message the model receives."""

    @override
    def before_model(self, ctx: ModelContext, /) -> BeforeResult[ModelContext, ModelResponse]:
        messages = tuple(
            replace(message, content=EMAIL.sub("<email>", message.content))
            for message in ctx.request.messages
        )
        return Cont(replace(ctx, request=replace(ctx.request, messages=messages)))


class RetryTransient(hooks.OnToolError):
    """Retry a tool call that failed with a transient error; pass any other error on."""

    @override
    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        if isinstance(failure.failure(), TRANSIENT):
            return Retry(ctx)  # the runner's RetryPolicy bounds how often
        return failure


class Audit(hooks.OnEvent):
    """Record every hook-point dispatch; an observer never changes the flow."""

    def __init__(self) -> None:
        self.events: list[HookEvent] = []

    @override
    def on_event(self, event: HookEvent, /) -> None:
        self.events.append(event)


def model_from_env() -> Model:
    """The demo's model: ``ScriptedModel`` offline, or the one ``HOOKLINE_MODEL`` names.

    ``HOOKLINE_MODEL=openai:gpt-5.5`` talks to OpenAI's Responses API (``OPENAI_API_KEY``;
    ``OPENAI_BASE_URL`` for another server that speaks it); ``openai-chat:<model>`` to
    any server speaking the Chat Completions format, with ``OPENAI_BASE_URL``:
    ``http://localhost:11434/v1`` (Ollama), ``http://localhost:8000/v1`` (vLLM).
    ``HOOKLINE_MODEL=anthropic:claude-sonnet-5-5`` talks to Anthropic's Messages API
    (``ANTHROPIC_API_KEY``, and ``ANTHROPIC_BASE_URL`` if set, as its SDK reads them).
    """
    spec = os.environ.get("HOOKLINE_MODEL", "")
    if not spec:
        return assistant_model()
    provider, _, name = spec.partition(":")
    if provider not in {"openai", "openai-chat", "anthropic"} or not name:
        msg = (
            "HOOKLINE_MODEL must look like 'openai:<model name>' (the Responses API), "
            "'openai-chat:<model name>' (Chat Completions) or 'anthropic:<model name>' "
            f"(the Messages API), got {spec!r}"
        )
        raise SystemExit(msg)
    # The extra is imported only when asked for.
    if provider == "anthropic":
        from runner import AnthropicModel

        return AnthropicModel(name)
    if provider == "openai-chat":
        from runner import OpenAIChatModel

        return OpenAIChatModel(name)
    from runner import OpenAIResponsesModel

    return OpenAIResponsesModel(name)


def assistant_model() -> ScriptedModel:
    """A stand-in for a real model: rules over the last user message or tool result."""
    return ScriptedModel(
        rules=[
            Rule(
                rf"(?P<a>{NUMBER}) *\+ *(?P<b>{NUMBER})", tool="add", args={"a": "{a}", "b": "{b}"}
            ),
            Rule(r"weather in (?P<city>\w+)", tool="weather", args={"city": "{city}"}),
            Rule(r"send (?P<what>.+) to (?P<to>\S+)", reply="Done: {what} went to {to}."),
            Rule(r"^(?P<city>\w+): (?P<report>.+)$", on="tool", reply="It's {report} in {city}."),
            Rule(rf"^{NUMBER}$", on="tool", reply="It is {0}."),
            Rule(r".*", on="tool", reply="That failed: {content}"),
        ],
        default="Sorry, I can only add numbers and check the weather.",
    )


# -- the run


@dataclass(frozen=True)
class Turn:
    """One message, what its run returned, and what the audit observer recorded."""

    message: str
    result: RunResult
    hook_events: tuple[HookEvent, ...]


@dataclass(frozen=True)
class Demo:
    """The demo's turns, and the model (whose ``requests`` show what it really received)."""

    turns: tuple[Turn, ...]
    model: Model


def run_demo(model: Model | None = None) -> Demo:
    """Send ``MESSAGES`` to the assistant (scripted by default) in one session."""
    model = assistant_model() if model is None else model
    # The agent's own callbacks apply to it alone; the runner's apply to every agent.
    agent = Agent("assistant", model, tools=[add, flaky_weather()], callbacks=[RedactEmails()])
    retry = RetryPolicy(max_attempts=3, base_delay=0.01)
    turns: list[Turn] = []
    with Runner(agent, callbacks=[Guard(), RetryTransient()], retry=retry) as runner:
        for message in MESSAGES:
            audit = Audit()
            result = runner.run(message, session_id="demo", callbacks=[audit])
            turns.append(Turn(message, result, tuple(audit.events)))
    return Demo(tuple(turns), model)


# -- the trace: a small function of the HookEvents and the run's own event record

_AGENT_POINTS: Final = frozenset({"before_agent", "after_agent"})


def trace(turn: Turn) -> list[str]:
    """The turn as lines: the message, each hook point that fired, the answer."""
    record = turn.result.events
    results = {e.call.id: e.result for e in record if isinstance(e, ToolResultEvent)}
    responses: defaultdict[str, deque[ModelResponse]] = defaultdict(deque)
    for item in record:
        if isinstance(item, ModelResponseEvent):
            responses[item.branch].append(item.response)
    lines = [f"user: {turn.message}"]
    for event in turn.hook_events:
        nested = event.point not in _AGENT_POINTS
        indent = "  " * (1 + 2 * event.branch.count("/") + nested)
        subject = f"{event.tool or 'model'} #{event.attempt}" if nested else event.agent
        micros = f"{event.duration * 1e6:.0f}µs"
        detail = _detail(event, results, responses[event.branch])
        if event.callback:  # the callback that halted, replaced, recovered or raised
            detail = f"{detail} ({event.callback.removesuffix(' instance')})".lstrip()
        lines.append(
            f"{indent}{event.point:<{18 - len(indent)}} {subject:<11} "
            f"{event.outcome:<8}{micros:>6}  {detail}".rstrip()
        )
    lines.append(f"answer: {turn.result.output}")
    return lines


def _detail(
    event: HookEvent, results: dict[str, ToolResult], responses: deque[ModelResponse]
) -> str:
    """What one dispatch led to; takes the model's answers from ``responses`` in order."""
    detail = ""
    match event.point, event.outcome:
        case _, "retry" if event.error is not None:
            detail = f"{type(event.error).__name__}: {event.error} -> try again"
        case _, _ if event.error is not None:
            detail = f"{type(event.error).__name__}: {event.error}"
        case "after_model", "success":
            response = responses.popleft()
            said = ", ".join(map(_call, response.tool_calls))
            detail = f"-> calls {said}" if said else f"-> {response.text!r}"
        case "before_agent" | "before_model", "halt":
            responses.popleft()  # the halt's value stands in for the model's answer
            detail = f"skips the {event.point.removeprefix('before_')}"
        case "before_tool", "halt":
            detail = "skips the tool"
        case "after_tool", _ if event.call_id in results:
            detail = f"-> {results[event.call_id].content!r}"
        case _, "retry":
            detail = "-> try again"
        case _:
            pass  # every other dispatch is shown without a detail
    return detail


def _call(call: ToolCall) -> str:
    args = ", ".join(f"{key}={value!r}" for key, value in call.args.items())
    return f"{call.name}({args})"


def main() -> None:
    """Run the demo and print its trace."""
    demo = run_demo(model_from_env())
    print("hookline quickstart -- Guard, RetryTransient (runner), RedactEmails (agent), Audit")
    print(
        "each line: hook point, what it guards (model or tool, #n = the call's attempt from 1), "
        "outcome, time in callbacks, what next (and the callback that decided it)\n"
    )
    for turn in demo.turns:
        print("\n".join(trace(turn)), end="\n\n")
    dispatches = [event for turn in demo.turns for event in turn.hook_events]
    retries = sum(event.outcome == "retry" for event in dispatches)
    halts = sum(event.outcome == "halt" for event in dispatches)
    print(
        f"{len(demo.turns)} runs: {len(dispatches)} hook dispatches, {retries} retry, {halts} halt"
    )


if __name__ == "__main__":
    main()
