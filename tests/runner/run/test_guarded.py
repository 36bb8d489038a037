"""The guarded operation: guards see what runs, every attempt is on record, payloads checked."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, Literal

import pytest

from hooks import (
    Cont,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    InvalidResult,
    Outcome,
    Result,
    Retry,
    Success,
)
from runner import (
    Agent,
    AttemptDiscardedEvent,
    ErrorEvent,
    FallbackEvent,
    Message,
    ModelAttemptEvent,
    ModelContext,
    ModelResponse,
    ModelResponseEvent,
    RetryEvent,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    RunStartedEvent,
    ScriptedModel,
    StreamEvent,
    TextDelta,
    ToolAttemptEvent,
    ToolCall,
    ToolCallEvent,
    ToolContext,
    ToolResult,
    ToolResultEvent,
)
from tests.helpers.runs import Mode, calling, drive, events_of, tool_messages

NO_WAIT = RetryPolicy(max_attempts=3, base_delay=0.0, jitter=0.0)


def read_file(path: str) -> str:
    """Read a file (it always fails here)."""
    raise PermissionError(path)


def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


class Redirect:
    """On a tool error, retries the call as ``delete_file``: what no guard approved."""

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Retry with another tool name."""
        return Retry(replace(ctx, call=replace(ctx.call, name="delete_file")))


class DenyDelete:
    """A guard that refuses ``delete_file`` and logs every call it sees."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Halt ``delete_file``; let the rest through."""
        self.seen.append((ctx.call.name, ctx.attempt))
        if ctx.call.name == "delete_file":
            return Halt(ToolResult("refused: delete_file", is_error=True))
        return Cont(ctx)


def file_model() -> ScriptedModel:
    return ScriptedModel([calling(ToolCall("c1", "read_file", {"path": "/etc"})), "done"])


def test_a_retry_that_changes_the_call_passes_the_before_hooks_again(mode: Mode) -> None:
    """A ``Retry`` turning the call into ``delete_file`` meets the guard, which halts it."""
    guard = DenyDelete()
    agent = Agent("assistant", file_model(), tools=[read_file, delete_file])
    with Runner(agent, retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[guard, Redirect()])
    assert guard.seen == [("read_file", 1), ("delete_file", 2)]
    [event] = events_of(result, ToolResultEvent)
    assert event.result == ToolResult("refused: delete_file", is_error=True)
    assert event.call.name == "delete_file"
    assert [e.call.name for e in events_of(result, ToolAttemptEvent)] == ["read_file"]
    [retry] = events_of(result, RetryEvent)
    assert (retry.operation, retry.attempt, retry.changed) == ("tool", 2, True)


class SameCallRetry:
    """Retries a failed tool call unchanged, counting its calls."""

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Retry as it is."""
        return Retry(ctx)


def test_a_plain_retry_does_not_run_the_before_hooks_again(mode: Mode) -> None:
    """``Retry(ctx)`` re-runs the checked call: the guard saw it once, the tool ran three times."""
    guard = DenyDelete()
    agent = Agent("assistant", file_model(), tools=[read_file])
    with Runner(agent, retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[guard, SameCallRetry()])
    assert guard.seen == [("read_file", 1)]
    assert [e.attempt for e in events_of(result, ToolAttemptEvent)] == [1, 2, 3]
    assert [e.attempt for e in events_of(result, ErrorEvent)] == [1, 2, 3]
    assert [(e.attempt, e.changed, e.delay) for e in events_of(result, RetryEvent)] == [
        (2, False, 0.0),
        (3, False, 0.0),
    ]
    [event] = events_of(result, ToolResultEvent)
    assert event.result.is_error
    assert "PermissionError" in event.result.content


class Rewrite:
    """Rewrites every ``read_file`` call's path before it runs."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Point the call at ``/tmp``."""
        return Cont(replace(ctx, call=replace(ctx.call, args={"path": "/tmp"})))


def test_events_record_the_call_that_ran_after_a_rewrite(mode: Mode) -> None:
    """The call event keeps what the model asked; the attempt and result show what ran."""
    agent = Agent("assistant", file_model(), tools=[read_file])
    with Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner:
        result = drive(runner, mode, "go", callbacks=[Rewrite()])
    [asked] = events_of(result, ToolCallEvent)
    [attempt] = events_of(result, ToolAttemptEvent)
    [done] = events_of(result, ToolResultEvent)
    assert asked.call.args == {"path": "/etc"}
    assert attempt.call.args == {"path": "/tmp"}
    assert done.call.args == {"path": "/tmp"}
    assert "PermissionError: /tmp" in done.result.content


class AddNote:
    """Adds a system note to every model request, counting how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext] | Halt[ModelResponse]:
        """Append one note message."""
        self.calls += 1
        note = Message("system", "be brief")
        return Cont(
            replace(ctx, request=replace(ctx.request, messages=(*ctx.request.messages, note)))
        )


class RetryModel:
    """Retries a failed model call, unchanged or with a rephrased last message."""

    def __init__(self, *, rephrase: bool) -> None:
        self.rephrase = rephrase

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry, rephrasing the request when asked to."""
        if not self.rephrase:
            return Retry(ctx)
        messages = (*ctx.request.messages[:-1], Message("user", "again"))
        return Retry(replace(ctx, request=replace(ctx.request, messages=messages)))


@pytest.mark.parametrize("rephrase", [False, True])
def test_a_model_retry_runs_before_model_again_only_when_the_request_changed(
    mode: Mode, rephrase: bool
) -> None:
    """A plain retry never adds the note twice; a changed request is checked (and noted) again."""
    note = AddNote()
    model = ScriptedModel([TimeoutError("slow"), "ok"])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=[note, RetryModel(rephrase=rephrase)])
    assert result.output == "ok"
    assert note.calls == (2 if rephrase else 1)
    sent = [e.request for e in events_of(result, ModelAttemptEvent)]
    assert [r.messages[-1].content for r in sent] == ["be brief", "be brief"]
    assert sum(m.content == "be brief" for m in sent[1].messages) == 1
    assert list(sent[1].messages) == list(model.requests[1].messages)


class Budgeted:
    """Retries while the budget lasts, then falls back: reads ``ctx.attempt``/``max_attempts``."""

    def __init__(self) -> None:
        self.seen: list[tuple[int, int]] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry, then fall back on the last attempt."""
        self.seen.append((ctx.attempt, ctx.max_attempts))
        if ctx.attempt < ctx.max_attempts:
            return Retry(ctx)
        return Fallback(ModelResponse("fallback"))


def test_contexts_carry_the_retry_budget_and_fallbacks_are_recorded(mode: Mode) -> None:
    """A handler retries, then falls back, from the context alone; the record shows each step."""
    handler = Budgeted()
    model = ScriptedModel([OSError("a"), OSError("b"), OSError("c")])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=[handler])
    assert result.output == "fallback"
    assert handler.seen == [(1, 3), (2, 3), (3, 3)]
    kinds = [type(e).__name__ for e in result.events]
    assert kinds == [
        "UserMessageEvent",
        "ModelAttemptEvent",
        "ErrorEvent",
        "RetryEvent",
        "ModelAttemptEvent",
        "ErrorEvent",
        "RetryEvent",
        "ModelAttemptEvent",
        "ErrorEvent",
        "FallbackEvent",
        "ModelResponseEvent",
    ]
    [fallback] = events_of(result, FallbackEvent)
    assert (fallback.operation, fallback.attempt) == ("model", 3)


class HaltTool:
    """Halts ``before_tool`` with a str: not a ``ToolResult``."""

    def before_tool(self, ctx: ToolContext, /) -> object:
        """Halt with text."""
        return Halt("refused")


class ContTool:
    """Goes on from ``before_tool`` with a str: not a ``ToolContext``."""

    def before_tool(self, ctx: ToolContext, /) -> object:
        """Go on with text."""
        return Cont("x")


class HaltModel:
    """Halts ``before_model`` with a str: not a ``ModelResponse``."""

    def before_model(self, ctx: ModelContext, /) -> object:
        """Halt with text."""
        return Halt("x")


class ContModel:
    """Goes on from ``before_model`` with a str: not a ``ModelContext``."""

    def before_model(self, ctx: ModelContext, /) -> object:
        """Go on with text."""
        return Cont("x")


class FallBack:
    """Falls back on every model error: it must not hide a callback's bad result."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Answer with a canned response."""
        return Fallback(ModelResponse("canned"))


@pytest.mark.parametrize(
    ("callback", "point"),
    [
        (HaltTool(), "before_tool"),
        (ContTool(), "before_tool"),
        (HaltModel(), "before_model"),
        (ContModel(), "before_model"),
    ],
)
def test_payloads_are_checked_at_the_built_in_points(
    mode: Mode, callback: object, point: str
) -> None:
    """A wrong payload is an ``InvalidResult`` naming the callback and point, never a result."""
    model = ScriptedModel([calling(ToolCall("c1", "read_file", {"path": "/"})), "done"])
    agent = Agent("assistant", model, tools=[read_file])
    with Runner(agent) as runner, pytest.raises(InvalidResult) as caught:
        drive(runner, mode, "go", callbacks=[callback, FallBack()])
    assert caught.value.point == point
    assert caught.value.callback is callback
    assert "str" in str(caught.value)


class RecoverBadly:
    """An after_model hook that answers a failure with ``None``: a bug."""

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Return nothing on a failure."""
        if isinstance(outcome, Failure):
            return None  # type: ignore[return-value]
        return outcome


def test_a_bad_after_model_result_keeps_the_original_error_chained(mode: Mode) -> None:
    """The ``InvalidResult`` raised while handling ``Failure(e)`` chains ``e``."""
    error = ConnectionError("down")
    model = ScriptedModel([error])
    with (
        Runner(Agent("assistant", model), retry=RetryPolicy(max_attempts=1)) as runner,
        pytest.raises(InvalidResult) as caught,
    ):
        drive(runner, mode, "hi", callbacks=[RecoverBadly()])
    assert error in (caught.value.__cause__, caught.value.__context__)


class Replace:
    """Replaces the agent's answer in ``after_agent``."""

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: object, /
    ) -> Result[ModelResponse, Exception]:
        """Answer ``replaced`` whatever the model said."""
        return Success(ModelResponse("replaced"))


def test_after_agent_replacement_is_recorded_and_saved(mode: Mode) -> None:
    """The replaced answer is the last response event and what the next turn's model sees."""
    model = ScriptedModel(["original", "second"])
    with Runner(Agent("assistant", model)) as runner:
        first = drive(runner, mode, "one", session_id="s", callbacks=[Replace()])
        drive(runner, mode, "two", session_id="s")
    assert first.output == "replaced"
    assert [e.response.text for e in events_of(first, ModelResponseEvent)] == [
        "original",
        "replaced",
    ]
    assert [(m.role, m.content) for m in model.requests[1].messages] == [
        ("user", "one"),
        ("assistant", "replaced"),
        ("user", "two"),
    ]


class RecoverAgent:
    """Answers a failed agent run in ``after_agent``."""

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: object, /
    ) -> Result[ModelResponse, Exception]:
        """Turn a failure into an apology."""
        if isinstance(outcome, Failure):
            return Success(ModelResponse("sorry"))
        return outcome


def test_after_agent_recovering_a_failure_records_and_saves_its_answer(mode: Mode) -> None:
    """A recovered failed run ends with the recovery as its answer, in events and session."""
    model = ScriptedModel([ConnectionError("down"), "later"])
    with Runner(Agent("assistant", model), retry=RetryPolicy(max_attempts=1)) as runner:
        first = drive(runner, mode, "one", session_id="s", callbacks=[RecoverAgent()])
        drive(runner, mode, "two", session_id="s")
    assert first.output == "sorry"
    assert events_of(first, ModelResponseEvent)[-1].response.text == "sorry"
    assert [m.content for m in model.requests[1].messages] == ["one", "sorry", "two"]


def test_tool_messages_keep_the_models_call_ids_after_a_rewrite(mode: Mode) -> None:
    """The history answers the model's own call id, so the next request stays valid."""
    agent = Agent("assistant", file_model(), tools=[read_file])
    with Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner:
        drive(runner, mode, "go", callbacks=[Rewrite()])
    model = agent.model
    assert isinstance(model, ScriptedModel)
    [message] = tool_messages(model.requests[1])
    assert (message.tool_call_id, message.name) == ("c1", "read_file")


def test_a_wait_between_attempts_is_the_policys_and_recorded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The recorded delay is the one slept: the policy's backoff when the retry names none."""
    slept: list[float] = []
    monkeypatch.setattr("runner._run.engine.time.sleep", slept.append)
    policy = RetryPolicy(max_attempts=2, base_delay=0.25, jitter=0.0)
    model = ScriptedModel([OSError("x"), "ok"])
    with Runner(Agent("assistant", model), retry=policy) as runner:
        result = runner.run("hi", callbacks=[RetryModel(rephrase=False)])
    [retry] = events_of(result, RetryEvent)
    assert retry.delay == 0.25
    assert slept == [0.25]


class Tamper:
    """Writes bogus ``attempt``/``max_attempts`` into every context it hands back.

    ``before_tool`` goes on with them; ``on_tool_error`` retries with them, first with a
    changed call (which passes ``before_tool`` again), then with the same call.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Go on with a context claiming attempt 7 of 99."""
        self.seen.append(("before_tool", ctx.attempt, ctx.max_attempts))
        return Cont(replace(ctx, attempt=7, max_attempts=99))

    def on_tool_error(
        self, failure: Failure[Exception], ctx: ToolContext, /
    ) -> ErrorResult[ToolContext, ToolResult]:
        """Retry claiming attempt 50 of 99: with other args once, then as it is."""
        self.seen.append(("on_tool_error", ctx.attempt, ctx.max_attempts))
        call = replace(ctx.call, args={"path": "/var"}) if ctx.attempt == 1 else ctx.call
        return Retry(replace(ctx, call=call, attempt=50, max_attempts=99))


def test_the_runner_owns_attempt_and_max_attempts(mode: Mode) -> None:
    """Whatever a before or error hook writes into them, contexts count the runner's attempts;
    the first ``before_tool`` already sees the call's budget."""
    tamper = Tamper()
    agent = Agent("assistant", file_model(), tools=[read_file])
    with Runner(agent, retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[tamper])
    assert tamper.seen == [
        ("before_tool", 1, 3),
        ("on_tool_error", 1, 3),
        ("before_tool", 2, 3),  # the changed call is checked again
        ("on_tool_error", 2, 3),
        ("on_tool_error", 3, 3),
    ]
    assert [e.attempt for e in events_of(result, ToolAttemptEvent)] == [1, 2, 3]
    [event] = events_of(result, ToolResultEvent)
    assert event.result.is_error


class Budgets:
    """Notes the attempt and budget each before hook is shown."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int, int]] = []

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext] | Halt[ModelResponse]:
        """Note and go on."""
        self.seen.append(("before_model", ctx.attempt, ctx.max_attempts))
        return Cont(ctx)

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Note and go on."""
        self.seen.append(("before_tool", ctx.attempt, ctx.max_attempts))
        return Cont(ctx)


def test_before_hooks_see_the_first_attempt_of_the_runners_budget(mode: Mode) -> None:
    """``before_model`` and ``before_tool`` see attempt 1 of ``RetryPolicy.max_attempts``."""
    budgets = Budgets()
    model = ScriptedModel([calling(ToolCall("c1", "delete_file", {"path": "/tmp"})), "done"])
    policy = RetryPolicy(max_attempts=4)
    with Runner(Agent("assistant", model, tools=[delete_file]), retry=policy) as runner:
        drive(runner, mode, "go", callbacks=[budgets])
    assert budgets.seen == [("before_model", 1, 4), ("before_tool", 1, 4), ("before_model", 1, 4)]


class FailTool:
    """Turns every successful tool call into ``error`` in ``after_tool``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """Fail a successful tool call."""
        return Failure(self.error) if isinstance(outcome, Success) else outcome


class FailModel:
    """Turns every successful model call into ``error`` in ``after_model``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext, /
    ) -> Result[ModelResponse, Exception]:
        """Fail a successful model call."""
        return Failure(self.error) if isinstance(outcome, Success) else outcome


def flaky_once() -> ScriptedModel:
    """A model failing its first call, then answering ``ok``."""
    return ScriptedModel([OSError("first"), "ok"])


def test_an_after_hook_failing_a_tool_call_is_on_record(mode: Mode) -> None:
    """The new error is recorded for the attempt that succeeded and becomes the error result."""
    error = LookupError("rejected by after_tool")
    calls: list[str] = []

    def fetch() -> str:
        """Fail once, then succeed."""
        calls.append("fetch")
        if len(calls) == 1:
            raise OSError("flaky")
        return "contents"

    model = ScriptedModel([calling(ToolCall("c1", "fetch")), "done"])
    agent = Agent("assistant", model, tools=[fetch])
    with Runner(agent, retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[SameCallRetry(), FailTool(error)])
    errors = events_of(result, ErrorEvent)
    assert [(type(e.error).__name__, e.operation, e.attempt) for e in errors] == [
        ("OSError", "tool", 1),
        ("LookupError", "tool", 2),
    ]
    assert errors[-1].error is error
    assert (errors[-1].agent, errors[-1].branch) == ("assistant", "assistant")
    kinds = [type(e).__name__ for e in result.events]
    assert kinds[kinds.index("RetryEvent") + 1 :][:3] == [
        "ToolAttemptEvent",
        "ErrorEvent",
        "ToolResultEvent",
    ]
    [done] = events_of(result, ToolResultEvent)
    assert done.result == ToolResult("LookupError: rejected by after_tool", is_error=True)


def test_an_after_hook_failing_a_model_call_is_on_record(mode: Mode) -> None:
    """The new error is recorded (operation "model", the attempt that succeeded) before the end."""
    error = LookupError("rejected by after_model")
    with Runner(Agent("assistant", flaky_once()), retry=NO_WAIT) as runner:
        result = drive(
            runner, mode, "hi", callbacks=[RetryModel(rephrase=False), FailModel(error), Recover()]
        )
    assert result.output == "recovered"
    errors = events_of(result, ErrorEvent)
    assert [(e.operation, e.attempt) for e in errors] == [("model", 1), ("model", 2)]
    assert errors[-1].error is error


def test_an_after_hook_passing_a_failure_on_adds_no_record(mode: Mode) -> None:
    """A failure the after hooks pass on unchanged is recorded once, for its attempt."""
    agent = Agent("assistant", file_model(), tools=[read_file])
    with Runner(agent, retry=RetryPolicy(max_attempts=1)) as runner:
        result = drive(runner, mode, "go", callbacks=[FailTool(LookupError("unused"))])
    [error] = events_of(result, ErrorEvent)
    assert isinstance(error.error, PermissionError)


class Recover:
    """Answers a failed agent run with ``recovered`` in ``after_agent``."""

    def after_agent(
        self, outcome: Outcome[ModelResponse], ctx: object, /
    ) -> Result[ModelResponse, Exception]:
        """Recover any failure."""
        return Success(ModelResponse("recovered")) if isinstance(outcome, Failure) else outcome


# -- streamed text that turns out not to be the answer -------------------------------


def streamed(
    runner: Runner, callbacks: list[object], hold: Literal["auto"] | None = None
) -> tuple[list[StreamEvent], BaseException | None]:
    """Every event of one streamed run, and what it raised (``None`` if nothing); streamed
    as generated unless ``hold`` says otherwise."""
    events: list[StreamEvent] = []

    async def main() -> None:
        async for event in runner.stream("hi", callbacks=callbacks, hold=hold):
            events.append(event)

    try:
        asyncio.run(main())
    except Exception as error:  # returned: the test checks it is the right one
        return events, error
    return events, None


def discards(events: list[StreamEvent]) -> list[tuple[int, str]]:
    """``(attempt, reason)`` of each ``AttemptDiscardedEvent``."""
    return [(e.attempt, e.reason) for e in events if isinstance(e, AttemptDiscardedEvent)]


class CallTwice:
    """An async model wrap that calls on twice and keeps the second answer."""

    async def wrap_model(self, ctx: ModelContext, call_next: Any, /) -> Any:
        """Call on, then again."""
        await call_next(ctx)
        return await call_next(ctx)


def test_a_wraps_second_call_discards_the_first_calls_streamed_text() -> None:
    """The text of the call a wrap threw away is announced discarded before the next call."""
    with Runner(Agent("assistant", ScriptedModel(["first", "second"]))) as runner:
        events, error = streamed(runner, [CallTwice()])
    assert error is None
    kinds = [type(e).__name__ for e in events if not isinstance(e, RunStartedEvent)]
    assert kinds[:5] == [
        "UserMessageEvent",
        "ModelAttemptEvent",
        "TextDelta",
        "AttemptDiscardedEvent",
        "ModelAttemptEvent",
    ]
    assert discards(events) == [(1, "replaced")]


@pytest.mark.parametrize("replaces", [True, False], ids=["replaced", "failed"])
def test_an_after_hook_overruling_streamed_text_discards_that_attempts_text(replaces: bool) -> None:
    """Replaced or failed by after_model, the text the retried attempt streamed is discarded."""
    refusal = LookupError("after_model refused")

    class Overrule:
        def after_model(self, outcome: Any, ctx: ModelContext, /) -> Any:
            """Replace or fail the answer."""
            return Success(ModelResponse("Replaced.")) if replaces else Failure(refusal)

    model = ScriptedModel([OSError("down"), "Original."])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        events, error = streamed(runner, [SameModelRetry(), Overrule()])
    assert discards(events) == [(2, "replaced")]
    if replaces:
        assert error is None
        finish = events[-1]
        assert isinstance(finish, RunFinishedEvent)
        assert finish.result.output == "Replaced."
    else:
        assert error is refusal


@pytest.mark.parametrize("replaces", [True, False], ids=["replaced", "failed"])
def test_held_an_after_hook_overruling_the_answer_shows_none_of_its_text(replaces: bool) -> None:
    """Held (the default with after_model), neither attempt's text is shown nor discarded:
    only the replacement goes out."""

    class Overrule:
        def after_model(self, outcome: Any, ctx: ModelContext, /) -> Any:
            """Replace or fail the answer."""
            return Success(ModelResponse("Replaced.")) if replaces else Failure(LookupError())

    model = ScriptedModel([OSError("down"), "Original."])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        events, _ = streamed(runner, [SameModelRetry(), Overrule()], hold="auto")
    assert discards(events) == []
    texts = [event.text for event in events if isinstance(event, TextDelta)]
    assert texts == (["Replaced."] if replaces else [])


class SameModelRetry:
    """Retries a failed model call unchanged."""

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> ErrorResult[ModelContext, ModelResponse]:
        """Retry as it is."""
        return Retry(ctx)


class HaltWithCalls:
    """A before_agent hook answering with a response that asks for a tool call."""

    def before_agent(self, ctx: object, /) -> object:
        """Halt with tool calls nobody will run."""
        return Halt(ModelResponse("canned", tool_calls=(ToolCall("x1", "add", {}),)))


def test_a_hook_answer_with_tool_calls_is_saved_without_them(mode: Mode) -> None:
    """The next turn's model never sees an unanswered tool call from a hook's answer."""
    model = ScriptedModel(["later"])
    with Runner(Agent("assistant", model)) as runner:
        first = drive(runner, mode, "one", session_id="s", callbacks=[HaltWithCalls()])
        drive(runner, mode, "two", session_id="s")
    assert first.output == "canned"
    sent = model.requests[0].messages
    assert [(m.role, m.content, m.tool_calls) for m in sent] == [
        ("user", "one", ()),
        ("assistant", "canned", ()),
        ("user", "two", ()),
    ]
