"""Wrap hooks: three callbacks around every model or tool attempt.

``python -m examples.wraps`` runs one agent with three wraps and prints what each did:

- ``Timing`` (``wrap_tool``) times every tool attempt: it calls ``call_next`` once;
- ``Cache`` (``wrap_tool``) answers a call it has seen from memory: it short-circuits,
  never calling ``call_next``, so the tool does not run again;
- ``Validate`` (``wrap_model``) checks the model's answer and, when it fails the check,
  asks again with feedback added to the request: it calls ``call_next`` up to
  ``tries`` times, then passes the last answer on as a ``Failure``.

The first callback in the list is the outermost wrap: ``[Timing(), Cache()]`` times
the cache too, so a cached answer shows up as a fast attempt.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final

from typing_extensions import override

from hooks import (
    Failure,
    Message,
    ModelContext,
    ModelResponse,
    Outcome,
    Success,
    ToolContext,
    ToolResult,
    WrapModel,
    WrapTool,
)
from runner import Agent, RetryPolicy, Rule, Runner, RunResult, ScriptedModel

NUMBER: Final = r"-?\d+(?:\.\d+)?"


def square(x: float) -> float:
    """Square a number."""
    return x * x


class Timing(WrapTool):
    """Times each tool attempt, cached or not."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []

    @override
    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        """Call the rest of the chain once and note how long it took."""
        start = time.perf_counter()
        outcome = call_next(ctx)
        self.timings.append((ctx.call.name, time.perf_counter() - start))
        return outcome


class Cache(WrapTool):
    """Answers a tool call it has answered before, by name and arguments."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], ToolResult] = {}
        self.hits = 0

    @override
    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        """A cached answer without running the tool, else run it and keep a success."""
        key = (ctx.call.name, repr(sorted(ctx.call.args.items())))
        cached = self.answers.get(key)
        if cached is not None:
            self.hits += 1
            return Success(cached)
        outcome = call_next(ctx)
        match outcome:
            case Success(result) if not result.is_error:
                self.answers[key] = result
            case _:
                pass  # failures and error results are not worth remembering
        return outcome


@dataclass
class Validate(WrapModel):
    """Asks the model again, with feedback, while its answer fails ``check``."""

    check: Callable[[ModelResponse], str | None]  # None when fine, else what is wrong
    tries: int = 2
    feedback: list[str] = field(default_factory=list)

    @override
    def wrap_model(
        self, ctx: ModelContext, call_next: Callable[[ModelContext], Outcome[ModelResponse]], /
    ) -> Outcome[ModelResponse]:
        """Up to ``tries`` calls; each failed check adds its complaint to the request."""
        outcome = call_next(ctx)
        for _ in range(self.tries - 1):
            match outcome:
                case Success(response):
                    problem = self.check(response)
                    if problem is None:
                        return outcome
                    self.feedback.append(problem)
                    said = f"Your answer {response.text!r} was rejected: {problem}. Try again."
                    note = Message("user", said)
                    request = replace(ctx.request, messages=(*ctx.request.messages, note))
                    outcome = call_next(replace(ctx, request=request))
                case Failure():
                    return outcome  # the model's own error: the error hooks decide
        match outcome:
            case Success(response) if (problem := self.check(response)) is not None:
                return Failure(ValueError(f"the model's answer failed validation: {problem}"))
            case _:
                return outcome


def polite(response: ModelResponse) -> str | None:
    """A check: a final answer must say please."""
    if response.tool_calls or "please" in response.text.lower():
        return None
    return "say please"


@dataclass(frozen=True)
class Demo:
    """The runs and the wraps, for the tests to read."""

    results: tuple[RunResult, ...]
    timing: Timing
    cache: Cache
    validate: Validate


def run_demo() -> Demo:
    """Square 4 twice (the second time from the cache), each answer validated."""
    model = ScriptedModel(
        rules=[
            Rule(r"answer '(?P<answer>.*)' was rejected", reply="Please note: {answer}"),
            Rule(rf"square of (?P<x>{NUMBER})", tool="square", args={"x": "{x}"}),
            Rule(r".*", on="tool", reply="It is {content}."),
        ]
    )
    timing, cache, validate = Timing(), Cache(), Validate(polite)
    agent = Agent("assistant", model, tools=[square])
    with Runner(
        agent, callbacks=[timing, cache, validate], retry=RetryPolicy(max_attempts=1)
    ) as runner:
        results = tuple(runner.run("what is the square of 4?") for _ in range(2))
    return Demo(results, timing, cache, validate)


def main() -> None:
    """Run the demo and say what each wrap did."""
    demo = run_demo()
    for result in demo.results:
        print(f"answer: {result.output}")
    print(f"tool attempts timed: {len(demo.timing.timings)}, cache hits: {demo.cache.hits}")
    print(f"answers sent back with feedback: {demo.validate.feedback}")


if __name__ == "__main__":
    main()
