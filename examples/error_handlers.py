"""Retry and fallback handlers: written as a module, then the ready-made ones.

``on_model_error`` and ``on_tool_error`` are plain functions at module level; ``main``
passes this module as a callback (``runner.run(..., callbacks=[handlers])``) and mypy
checks it against ``hooks.OnModelError`` and ``hooks.OnToolError`` (end of the file).

Three runs with this module, one per answer an error hook can give:

1. the model times out once: ``Retry``, and the second attempt answers;
2. a tool keeps failing: ``Retry`` while attempts remain, then ``Fallback``;
3. the model's API key was revoked: passed on as ``Failure``, so ``run()`` raises it.

And one with the handlers ``runner`` ships, ``[RetryTransient(), FallbackModel(backup)]``:

4. the provider keeps answering 429 with ``Retry-After``: ``RetryTransient`` waits what
   it asks while attempts remain, then passes the error on, and ``FallbackModel``
   answers from the backup model. The error is any exception with a ``status_code`` and
   headers, as every provider SDK raises them: nothing provider-specific is imported.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import hooks
from hooks import (
    ErrorResult,
    Failure,
    Fallback,
    HookEvent,
    ModelContext,
    ModelResponse,
    Retry,
    ToolContext,
    ToolResult,
)
from runner import Agent, FallbackModel, RetryPolicy, RetryTransient, Rule, Runner, ScriptedModel

RETRY: Final = RetryPolicy(max_attempts=3, base_delay=0.001)
TRANSIENT: Final = (ConnectionError, TimeoutError)


def on_model_error(
    failure: Failure[Exception], ctx: ModelContext
) -> ErrorResult[ModelContext, ModelResponse]:
    """Retry a model call that timed out or lost its connection; pass anything else on."""
    if isinstance(failure.failure(), TRANSIENT):
        return Retry(ctx)
    return failure


def on_tool_error(
    failure: Failure[Exception], ctx: ToolContext
) -> ErrorResult[ToolContext, ToolResult]:
    """Retry a transient tool error while attempts remain, then fall back to a stand-in.

    The runner stops retrying by itself when the budget is spent, but then passes the
    error on; to fall back instead, the handler decides on the last attempt, which the
    context tells it (``ctx.attempt`` of ``ctx.max_attempts``).
    """
    if not isinstance(failure.failure(), TRANSIENT):
        return failure
    if ctx.attempt < ctx.max_attempts:
        return Retry(ctx)
    return Fallback(ToolResult(f"{ctx.call.name} is unavailable; answer without it"))


# -- the four runs


class RateLimited(Exception):
    """A provider's 429 as its SDK would raise it: an HTTP status and the response headers."""

    status_code = 429

    def __init__(self) -> None:
        super().__init__("429 Too Many Requests")
        self.headers = {"Retry-After-Ms": "5"}  # the server asks for 5 ms


def search(query: str) -> str:
    """Search the web (its backend is down for this whole example)."""
    msg = f"search backend unreachable (query {query!r})"
    raise ConnectionError(msg)


@dataclass(frozen=True)
class Report:
    """One run: what was asked, each error hook's outcome, and the answer or the error."""

    title: str
    handled: tuple[HookEvent, ...]
    answer: str | None = None
    error: Exception | None = None


def run_case(
    title: str,
    model: ScriptedModel,
    tools: Sequence[object] = (),
    handlers: Sequence[object] = (),
) -> Report:
    """Ask the assistant one question with ``handlers``; report what happened.

    The handlers are this module's unless others are given.
    """
    handlers = handlers or [sys.modules[__name__]]  # this very module, whatever its name
    seen: list[HookEvent] = []
    callbacks = [*handlers, hooks.observing(seen.append)]
    with Runner(Agent("assistant", model, tools=tools), retry=RETRY) as runner:
        try:
            answer = runner.run("search for hookline", callbacks=callbacks).output
        except PermissionError as error:  # a permanent model error, passed on by the handler
            return Report(title, _handled(seen), error=error)
    return Report(title, _handled(seen), answer=answer)


def _handled(events: list[HookEvent]) -> tuple[HookEvent, ...]:
    return tuple(event for event in events if event.point in {"on_model_error", "on_tool_error"})


def run_cases() -> list[Report]:
    """The four runs of the module docstring, in order."""
    answers_from_tool = Rule(r".*", on="tool", reply="Search said: {content}.")
    return [
        run_case(
            "the model times out once",
            ScriptedModel([TimeoutError("model timed out"), "Here is what I know about hookline."]),
        ),
        run_case(
            "the search tool keeps failing",
            ScriptedModel(
                rules=[
                    Rule(r"search for (?P<q>.+)", tool="search", args={"query": "{q}"}),
                    answers_from_tool,
                ]
            ),
            tools=[search],
        ),
        run_case(
            "the model's API key was revoked",
            ScriptedModel([PermissionError("API key revoked")]),
        ),
        run_case(
            "the provider keeps rate-limiting (ready-made handlers)",
            ScriptedModel([RateLimited(), RateLimited(), RateLimited()]),
            handlers=[
                RetryTransient(),
                FallbackModel(ScriptedModel(["The backup model says: hookline is a hook system."])),
            ],
        ),
    ]


def main() -> None:
    """Run the four cases and print what each error hook decided."""
    print(f"error handlers: {RETRY.max_attempts} attempts per call")
    for number, report in enumerate(run_cases(), 1):
        print(f"\n{number}. {report.title}")
        for event in report.handled:
            why = f"  {type(event.error).__name__}" if event.error is not None else ""
            by = f" by {event.callback}" if event.callback is not None else ""
            print(
                f"   {event.point} {event.tool or 'model'} #{event.attempt}"
                f" -> {event.outcome}{by}{why}"
            )
        if report.error is not None:
            print(f"   run() raised {type(report.error).__name__}: {report.error}")
        else:
            print(f"   answer: {report.answer}")


if TYPE_CHECKING:
    # mypy checks this module against the protocols it implements, as it would a class.
    import examples.error_handlers as _self  # noqa: PLW0406 -- for mypy only, never run

    _model_errors: hooks.OnModelError = _self
    _tool_errors: hooks.OnToolError = _self


if __name__ == "__main__":
    main()
