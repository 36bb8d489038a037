"""HooklineCapability beyond the scenario suite: the model points, refusals, observers,
the decisions' translation, the import boundary; sync and async callbacks alike."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any

import pytest
from pydantic_ai import Agent, Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.tools import ToolApproved
from returns.result import Failure, Success

import hooks
from hooks import (
    Approve,
    Cont,
    Edit,
    Fallback,
    Halt,
    HookEvent,
    InvalidCallbacks,
    Message,
    ModelContext,
    Outcome,
    Reject,
    Respond,
    Retry,
    StopRun,
    ToolContext,
    ToolResult,
    audit,
)
from runner.adapters.pydantic_ai import HooklineCapability, deferred_results


class Boom(RuntimeError):
    """The fake model's or tool's failure."""


def _agent(
    answers: Sequence[ModelResponse | Exception],
    callbacks: Sequence[object],
    *,
    seen: list[list[ModelMessage]] | None = None,
    tools: Sequence[Tool[Any]] = (),
    max_attempts: int = 3,
) -> Agent[None, str]:
    """An agent whose model answers ``answers`` in order (raising the exceptions), each
    request's messages appended to ``seen``."""
    queue = list(answers)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if seen is not None:
            seen.append(list(messages))
        given = queue.pop(0)
        if isinstance(given, Exception):
            raise given
        return given

    return Agent(
        FunctionModel(answer),
        name="assistant",
        tools=list(tools),
        capabilities=[HooklineCapability(callbacks, max_attempts=max_attempts)],
    )


def _text(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def _user_texts(messages: list[ModelMessage]) -> list[str]:
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart) and isinstance(part.content, str)
    ]


def _redacted(ctx: ModelContext) -> ModelContext:
    messages = tuple(
        replace(m, content=m.content.replace("hunter2", "[secret]")) for m in ctx.request.messages
    )
    return replace(ctx, request=replace(ctx.request, messages=messages))


class SyncRedact:
    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        return Cont(_redacted(ctx))


class AsyncRedact:
    async def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        return Cont(_redacted(ctx))


@pytest.mark.parametrize("redact", [SyncRedact(), AsyncRedact()], ids=["sync", "async"])
def test_before_model_rewrites_what_the_model_receives(redact: object) -> None:
    seen: list[list[ModelMessage]] = []
    agent = _agent([_text("ok")], [redact], seen=seen)
    assert agent.run_sync("my password is hunter2").output == "ok"
    assert _user_texts(seen[0]) == ["my password is [secret]"]


def test_before_model_that_changes_nothing_sends_the_messages_as_they_were() -> None:
    class Pass:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            return Cont(ctx)

    seen: list[list[ModelMessage]] = []
    agent = _agent([_text("ok")], [Pass()], seen=seen)
    agent.run_sync("hello")
    assert _user_texts(seen[0]) == ["hello"]


def test_before_model_halt_answers_without_calling_the_model() -> None:
    class Refuse:
        async def before_model(self, ctx: ModelContext, /) -> Halt[hooks.ModelResponse]:
            return Halt(hooks.ModelResponse(text="refused"))

    seen: list[list[ModelMessage]] = []
    agent = _agent([], [Refuse()], seen=seen)
    assert agent.run_sync("anything").output == "refused"
    assert seen == []


def test_after_model_replaces_the_answer() -> None:
    class Shout:
        def after_model(
            self, outcome: Outcome[hooks.ModelResponse], ctx: ModelContext, /
        ) -> Outcome[hooks.ModelResponse]:
            match outcome:
                case Success(response):
                    return Success(replace(response, text=response.text.upper()))
                case _:
                    return outcome

    agent = _agent([_text("quiet")], [Shout()])
    assert agent.run_sync("hi").output == "QUIET"


class RetryOnce:
    def __init__(self) -> None:
        self.attempts: list[int] = []

    def on_model_error(
        self, failure: Failure[Exception], ctx: ModelContext, /
    ) -> Retry[ModelContext] | Failure[Exception]:
        self.attempts.append(ctx.attempt)
        extra = Message("user", f"attempt {ctx.attempt} failed")
        request = replace(ctx.request, messages=(*ctx.request.messages, extra))
        return Retry(replace(ctx, request=request))


def test_model_retry_attempts_again_with_the_changed_request() -> None:
    seen: list[list[ModelMessage]] = []
    retry = RetryOnce()
    agent = _agent([Boom("503"), _text("second time")], [retry], seen=seen)
    assert agent.run_sync("hi").output == "second time"
    assert retry.attempts == [1]
    assert _user_texts(seen[1]) == ["hi", "attempt 1 failed"]


def test_model_retry_stops_at_max_attempts_with_the_error() -> None:
    retry = RetryOnce()
    agent = _agent([Boom("1"), Boom("2"), Boom("3")], [retry], max_attempts=2)
    with pytest.raises(Boom, match="2"):
        agent.run_sync("hi")
    assert retry.attempts == [1, 2]


def test_model_fallback_and_unrecovered_failure() -> None:
    class Down:
        async def on_model_error(
            self, failure: Failure[Exception], ctx: ModelContext, /
        ) -> Fallback[hooks.ModelResponse] | Failure[Exception]:
            if "503" in str(failure.failure()):
                return Fallback(hooks.ModelResponse(text="later"))
            return failure

    assert _agent([Boom("503")], [Down()]).run_sync("hi").output == "later"
    with pytest.raises(Boom, match="401"):
        _agent([Boom("401")], [Down()]).run_sync("hi")


def test_async_wrap_model_replaces_the_answer_and_cannot_call_next_twice() -> None:
    class Suffix:
        async def wrap_model(
            self,
            ctx: ModelContext,
            call_next: Callable[[ModelContext], Awaitable[Outcome[hooks.ModelResponse]]],
            /,
        ) -> Outcome[hooks.ModelResponse]:
            match await call_next(ctx):
                case Success(response):
                    return Success(replace(response, text=response.text + "!"))
                case failed:
                    return failed

    class Twice:
        async def wrap_model(
            self,
            ctx: ModelContext,
            call_next: Callable[[ModelContext], Awaitable[Outcome[hooks.ModelResponse]]],
            /,
        ) -> Outcome[hooks.ModelResponse]:
            await call_next(ctx)
            return await call_next(ctx)

    assert _agent([_text("hi")], [Suffix()]).run_sync("x").output == "hi!"
    with pytest.raises(RuntimeError, match="call_next once"):
        _agent([_text("a"), _text("b")], [Twice()]).run_sync("x")


def _calls(*parts: ToolCallPart) -> ModelResponse:
    return ModelResponse(parts=list(parts))


def _tool_returns(messages: list[ModelMessage]) -> list[str]:
    return [
        part.model_response_str()
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def _flaky() -> tuple[list[str], Tool[Any]]:
    ran: list[str] = []

    def fetch(url: str) -> str:
        """Fetch a URL."""
        ran.append(url)
        if url == "bad":
            raise Boom(f"cannot fetch {url}")
        return f"page {url}"

    return ran, Tool(fetch)


def test_async_wrap_tool_may_call_next_twice() -> None:
    class Twice:
        async def wrap_tool(
            self,
            ctx: ToolContext,
            call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
            /,
        ) -> Outcome[ToolResult]:
            await call_next(ctx)
            return await call_next(ctx)

    ran, tool = _flaky()
    seen: list[list[ModelMessage]] = []
    agent = _agent(
        [_calls(ToolCallPart("fetch", {"url": "a"}, tool_call_id="c1")), _text("done")],
        [Twice()],
        seen=seen,
        tools=[tool],
    )
    assert agent.run_sync("go").output == "done"
    assert ran == ["a", "a"]
    assert _tool_returns(seen[1]) == ["page a"]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_tool_failure_no_hook_recovers_fails_the_run_after_after_tool(is_async: bool) -> None:
    told: list[str] = []

    def note(outcome: Outcome[ToolResult]) -> Outcome[ToolResult]:
        told.append(type(outcome).__name__)
        return outcome

    class SyncAfter:
        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            return note(outcome)

    class AsyncAfter:
        async def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            return note(outcome)

    _, tool = _flaky()
    agent = _agent(
        [_calls(ToolCallPart("fetch", {"url": "bad"}, tool_call_id="c1"))],
        [AsyncAfter() if is_async else SyncAfter()],
        tools=[tool],
    )
    with pytest.raises(Boom, match="cannot fetch bad"):
        agent.run_sync("go")
    assert told == ["Failure"]


def test_tool_fallback_and_after_tool_replacement_reach_the_model() -> None:
    class Mend:
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> Fallback[ToolResult]:
            return Fallback(ToolResult("cached page"))

        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            match outcome:
                case Success(result):
                    return Success(replace(result, content=result.content + " (checked)"))
                case _:
                    return outcome

    _, tool = _flaky()
    seen: list[list[ModelMessage]] = []
    agent = _agent(
        [
            _calls(
                ToolCallPart("fetch", {"url": "bad"}, tool_call_id="c1"),
                ToolCallPart("fetch", {"url": "ok"}, tool_call_id="c2"),
            ),
            _text("done"),
        ],
        [Mend()],
        seen=seen,
        tools=[tool],
    )
    assert agent.run_sync("go").output == "done"
    assert sorted(_tool_returns(seen[1])) == ["cached page (checked)", "page ok (checked)"]


def test_a_before_tool_that_renames_the_call_is_refused() -> None:
    class Rename:
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            return Cont(replace(ctx, call=replace(ctx.call, name="other")))

    _, tool = _flaky()
    agent = _agent(
        [_calls(ToolCallPart("fetch", {"url": "a"}, tool_call_id="c1"))], [Rename()], tools=[tool]
    )
    with pytest.raises(InvalidCallbacks, match="runs the tool the model called"):
        agent.run_sync("go")


def test_observers_see_each_dispatch_and_a_stoprun_stops_only_outside_the_audit_tier() -> None:
    events: list[HookEvent] = []

    class Stop:
        def on_event(self, event: HookEvent, /) -> None:
            events.append(event)
            raise StopRun("enough")

    agent = _agent([_text("ok")], [audit(Stop())])
    assert agent.run_sync("hi").output == "ok"
    assert [(e.point, e.outcome, e.agent, e.branch) for e in events] == [
        ("before_model", "cont", "assistant", "assistant"),
        ("after_model", "success", "assistant", "assistant"),
    ]
    with pytest.raises(StopRun, match="enough"):
        _agent([_text("ok")], [Stop()]).run_sync("hi")


class AgentHook:
    def before_agent(self, ctx: hooks.AgentContext, /) -> Cont[hooks.AgentContext]:
        return Cont(ctx)


class SyncWrap:
    def wrap_tool(
        self, ctx: ToolContext, call_next: Callable[[ToolContext], Outcome[ToolResult]], /
    ) -> Outcome[ToolResult]:
        return call_next(ctx)


class AsyncWrap:
    async def wrap_tool(
        self,
        ctx: ToolContext,
        call_next: Callable[[ToolContext], Awaitable[Outcome[ToolResult]]],
        /,
    ) -> Outcome[ToolResult]:
        return await call_next(ctx)


class Misspelled:
    def before_tol(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        return Cont(ctx)


@pytest.mark.parametrize(
    ("callbacks", "match"),
    [
        ([AgentHook()], "cannot run agent hooks"),
        ([SyncWrap(), AsyncWrap()], "plain def beside async def wraps"),
        ([Misspelled()], "before_tool"),
        ("guards", "a list or tuple"),
        ([object], "pass an instance"),
    ],
    ids=["agent-hook", "mixed-wraps", "misspelled", "not-a-list", "a-class"],
)
def test_what_cannot_run_is_refused_when_the_capability_is_made(
    callbacks: object, match: str
) -> None:
    with pytest.raises(InvalidCallbacks, match=match):
        HooklineCapability(callbacks)  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "error"), [(0, ValueError), ("3", TypeError), (True, TypeError)])
def test_max_attempts_is_an_int_of_at_least_one(given: object, error: type[Exception]) -> None:
    with pytest.raises(error, match="max_attempts"):
        HooklineCapability([], max_attempts=given)  # type: ignore[arg-type]


def test_deferred_results_carries_each_decision() -> None:
    results = deferred_results({"a": Approve(), "e": Edit({"x": 1}), "r": Reject("no")})
    assert results.approvals == {
        "a": ToolApproved(),
        "e": ToolApproved(override_args={"x": 1}),
        "r": ToolApproved(),
    }
    assert results.metadata == {
        "a": {"hookline_decision": ("approve",)},
        "e": {"hookline_decision": ("edit",)},
        "r": {"hookline_decision": ("reject", "no")},
    }


@pytest.mark.parametrize(
    "decisions",
    [{"a": Respond({"v": 1})}, {"a": "yes"}, {1: Approve()}],
    ids=["respond", "not-a-decision", "key"],
)
def test_deferred_results_refuses_what_is_no_decision_on_a_call(decisions: dict[Any, Any]) -> None:
    with pytest.raises(TypeError, match="deferred_results"):
        deferred_results(decisions)


@pytest.mark.subprocess
def test_without_pydantic_ai_the_adapter_names_the_extra_and_runner_never_imports_it() -> None:
    script = (
        "import sys\n"
        "import hooks, runner\n"
        "assert 'pydantic_ai' not in sys.modules, 'imported'\n"
        "sys.modules['pydantic_ai'] = None\n"
        "try:\n"
        "    import runner.adapters.pydantic_ai\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert "pip install 'hookline[pydantic-ai]'" in done.stdout


def test_before_model_sees_the_whole_history_on_every_request() -> None:
    seen: list[list[tuple[str, str]]] = []

    class Record:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            seen.append([(m.role, m.content) for m in ctx.request.messages])
            return Cont(ctx)

    _, tool = _flaky()
    agent = _agent(
        [
            _calls(ToolCallPart("fetch", {"url": "a"}, tool_call_id="c1")),
            _calls(ToolCallPart("fetch", {"url": "b"}, tool_call_id="c2")),
            _text("done"),
        ],
        [Record()],
        tools=[tool],
    )
    assert agent.run_sync("go").output == "done"
    assert seen == [
        [("user", "go")],
        [("user", "go"), ("assistant", ""), ("tool", "page a")],
        [
            ("user", "go"),
            ("assistant", ""),
            ("tool", "page a"),
            ("assistant", ""),
            ("tool", "page b"),
        ],
    ]


def test_observers_are_told_of_a_raising_callback_and_one_that_raises_is_skipped() -> None:
    events: list[tuple[str, str, str | None]] = []

    class Told:
        async def on_event(self, event: HookEvent, /) -> None:
            events.append((event.point, event.outcome, type(event.error).__name__))

    class Broken:
        def on_event(self, event: HookEvent, /) -> None:
            raise RuntimeError("observer bug")

    class Raises:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            raise Boom("guard bug")

    with pytest.raises(Boom, match="guard bug"):
        _agent([_text("never")], [Broken(), Told(), Raises()]).run_sync("hi")
    assert events == [("before_model", "raised", "Boom")]


def test_after_model_failure_raises_out_of_the_run() -> None:
    class Refuse:
        def after_model(
            self, outcome: Outcome[hooks.ModelResponse], ctx: ModelContext, /
        ) -> Outcome[hooks.ModelResponse]:
            return Failure(Boom("refused answer"))

    with pytest.raises(Boom, match="refused answer"):
        _agent([_text("bad")], [Refuse()]).run_sync("hi")


def test_wrap_model_may_change_the_request_or_pass_the_answer_through() -> None:
    class System:
        async def wrap_model(
            self,
            ctx: ModelContext,
            call_next: Callable[[ModelContext], Awaitable[Outcome[hooks.ModelResponse]]],
            /,
        ) -> Outcome[hooks.ModelResponse]:
            messages = (Message("system", "be brief"), *ctx.request.messages)
            return await call_next(replace(ctx, request=replace(ctx.request, messages=messages)))

    seen: list[list[ModelMessage]] = []
    result = _agent([_text("ok")], [System()], seen=seen).run_sync("hi")
    assert result.output == "ok"
    kinds = [type(p).__name__ for m in seen[0] if isinstance(m, ModelRequest) for p in m.parts]
    assert kinds == ["SystemPromptPart", "UserPromptPart"]


def test_tool_retry_is_bounded_and_a_changed_retry_may_be_halted_by_the_guard() -> None:
    class Stubborn:
        def __init__(self) -> None:
            self.attempts: list[int] = []

        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> Retry[ToolContext]:
            self.attempts.append(ctx.attempt)
            return Retry(ctx)

    stubborn = Stubborn()
    ran, tool = _flaky()
    agent = _agent(
        [_calls(ToolCallPart("fetch", {"url": "bad"}, tool_call_id="c1"))],
        [stubborn],
        tools=[tool],
        max_attempts=2,
    )
    with pytest.raises(Boom):
        agent.run_sync("go")
    assert (stubborn.attempts, ran) == ([1, 2], ["bad", "bad"])

    class Elsewhere:
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
            if ctx.call.args["url"] == "other":
                return Halt(ToolResult("not there either"))
            return Cont(ctx)

        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> Retry[ToolContext]:
            return Retry(replace(ctx, call=replace(ctx.call, args={"url": "other"})))

    ran, tool = _flaky()
    seen: list[list[ModelMessage]] = []
    agent = _agent(
        [_calls(ToolCallPart("fetch", {"url": "bad"}, tool_call_id="c1")), _text("done")],
        [Elsewhere()],
        seen=seen,
        tools=[tool],
    )
    assert agent.run_sync("go").output == "done"
    assert ran == ["bad"]
    assert _tool_returns(seen[1]) == ["not there either"]


def test_a_tool_value_that_is_no_str_reaches_the_model_as_pydantic_ai_shows_it() -> None:
    def numbers() -> list[int]:
        """Some numbers."""
        return [1, 2]

    class Look:
        def __init__(self) -> None:
            self.results: list[str] = []

        def after_tool(
            self, outcome: Outcome[ToolResult], ctx: ToolContext, /
        ) -> Outcome[ToolResult]:
            match outcome:
                case Success(result):
                    self.results.append(result.content)
                case _:
                    pass
            return outcome

    look = Look()
    seen: list[list[ModelMessage]] = []
    agent = _agent(
        [_calls(ToolCallPart("numbers", {}, tool_call_id="c1")), _text("done")],
        [look],
        seen=seen,
        tools=[Tool(numbers)],
    )
    assert agent.run_sync("go").output == "done"
    assert look.results == ["[1,2]"]
    assert _tool_returns(seen[1]) == ["[1,2]"]


def test_a_tool_asking_the_model_to_retry_passes_through_the_hooks() -> None:
    from pydantic_ai import ModelRetry

    asked: list[int] = []

    def picky(n: int) -> str:
        """Wants n > 0."""
        asked.append(n)
        if n <= 0:
            raise ModelRetry("n must be positive")
        return "fine"

    class Errors:
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> Failure[Exception]:
            raise AssertionError("a retry request is no tool error")

    for extra in ([], [AsyncWrap()]):
        asked.clear()
        agent = _agent(
            [
                _calls(ToolCallPart("picky", {"n": 0}, tool_call_id="c1")),
                _calls(ToolCallPart("picky", {"n": 1}, tool_call_id="c2")),
                _text("done"),
            ],
            [Errors(), *extra],
            tools=[Tool(picky)],
        )
        assert agent.run_sync("go").output == "done"
        assert asked == [0, 1]


def test_the_capability_names_its_callbacks() -> None:
    assert repr(HooklineCapability([], max_attempts=2)).endswith("max_attempts=2)")


def test_before_model_rewriting_a_tool_result_keeps_the_rest_of_the_history() -> None:
    class HidePages:
        def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
            messages = tuple(
                replace(m, content="[page hidden]") if m.role == "tool" else m
                for m in ctx.request.messages
            )
            return Cont(replace(ctx, request=replace(ctx.request, messages=messages)))

    _, tool = _flaky()
    seen: list[list[ModelMessage]] = []
    queue = [_calls(ToolCallPart("fetch", {"url": "a"}, tool_call_id="c1")), _text("done")]

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        return queue.pop(0)

    agent: Agent[None, str] = Agent(
        FunctionModel(answer),
        system_prompt="you fetch pages",
        tools=[tool],
        capabilities=[HooklineCapability([HidePages()])],
    )
    assert agent.run_sync("go").output == "done"
    second = seen[1]
    parts = [(type(p).__name__, getattr(p, "content", None)) for m in second for p in m.parts]
    assert parts == [
        ("SystemPromptPart", "you fetch pages"),
        ("UserPromptPart", "go"),
        ("ToolCallPart", None),
        ("ToolReturnPart", "[page hidden]"),
    ]
    (call,) = [p for p in second[1].parts if isinstance(p, ToolCallPart)]
    assert (call.tool_name, call.args, call.tool_call_id) == ("fetch", {"url": "a"}, "c1")


def test_a_model_error_no_callback_handles_is_the_models_own() -> None:
    class ToolsOnly:
        def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
            return Cont(ctx)

    with pytest.raises(Boom, match="overloaded"):
        _agent([Boom("overloaded")], [ToolsOnly()]).run_sync("hi")


def test_an_observer_is_told_a_tool_failure_with_its_error() -> None:
    told: list[tuple[str, str, str]] = []

    class Told:
        def on_event(self, event: HookEvent, /) -> None:
            if event.tool is not None:
                told.append((event.point, event.outcome, type(event.error).__name__))

    _, tool = _flaky()
    agent = _agent(
        [_calls(ToolCallPart("fetch", {"url": "bad"}, tool_call_id="c1"))], [Told()], tools=[tool]
    )
    with pytest.raises(Boom):
        agent.run_sync("go")
    assert told == [
        ("before_tool", "cont", "NoneType"),
        ("on_tool_error", "failure", "Boom"),
        ("after_tool", "failure", "Boom"),
    ]


def test_a_tool_may_answer_with_hooklines_tool_result() -> None:
    def rich() -> ToolResult:
        """A hookline-aware tool."""
        return ToolResult("rich answer")

    seen: list[list[ModelMessage]] = []
    agent = _agent(
        [_calls(ToolCallPart("rich", {}, tool_call_id="c1")), _text("done")],
        [audit(observer := _Count())],
        seen=seen,
        tools=[Tool(rich)],
    )
    assert agent.run_sync("go").output == "done"
    assert observer.told > 0
    assert _tool_returns(seen[1]) == ["rich answer"]


class _Count:
    def __init__(self) -> None:
        self.told = 0

    def on_event(self, event: HookEvent, /) -> None:
        self.told += 1
