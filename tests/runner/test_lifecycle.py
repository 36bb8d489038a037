"""The Runner's edges: bad input refused early, closing under load, threads, parallel errors."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from hooks import (
    Cont,
    DispatchPolicy,
    Halt,
    HookEvent,
    InvalidCallbacks,
    StateKey,
    StopRun,
    observing,
)
from runner import (
    Agent,
    InMemorySessions,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    RunFinishedEvent,
    Runner,
    RunStartedEvent,
    ScriptedModel,
    StreamEvent,
    ToolAttemptEvent,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolResultEvent,
    Usage,
)
from tests.helpers.runs import AsyncScripted, Mode, add, calling, drive, events_of


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"retry": "x"}, TypeError, "retry must be a RetryPolicy, got str"),
        ({"sessions": {}}, TypeError, "sessions must be a SessionStore, got dict"),
        ({"policy": True}, TypeError, "policy must be a DispatchPolicy, got bool"),
        ({"executor": 4}, TypeError, "executor must be a Executor, got int"),
        ({"max_steps": 2.5}, TypeError, "max_steps"),
        ({"max_steps": float("inf")}, TypeError, "max_steps"),
        ({"max_steps": 0}, ValueError, "max_steps"),
    ],
)
def test_runner_refuses_bad_arguments_at_construction(
    kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    """Each bad argument is refused by ``Runner(...)`` naming it, not later inside a run."""
    with pytest.raises(error, match=words):
        Runner(Agent("assistant", ScriptedModel()), **kwargs)


class Guard:
    """A guard with one hook method."""

    def before_model(self, ctx: Any, /) -> Any:
        """Go on."""
        return Cont(ctx)


def test_a_single_callback_where_a_list_belongs_is_refused(mode: Mode) -> None:
    """``callbacks=guard`` is refused with the fix in the message, at construction and per run."""
    with pytest.raises(InvalidCallbacks, match=r"\[callback\]"):
        Runner(Agent("assistant", ScriptedModel()), callbacks=Guard())  # type: ignore[arg-type]
    with (
        Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner,
        pytest.raises(InvalidCallbacks, match=r"\[callback\]"),
    ):
        drive(runner, mode, "hi", callbacks=Guard())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ids", "error"),
    [
        ({"session_id": ""}, ValueError),
        ({"user_id": ""}, ValueError),
        ({"user_id": None}, TypeError),
        ({"session_id": 7}, TypeError),
    ],
)
def test_empty_or_non_str_ids_are_refused(
    mode: Mode, ids: dict[str, Any], error: type[Exception]
) -> None:
    """An empty session id would be one session shared by everyone: refused, as is a None user."""
    model = ScriptedModel(default="ok")
    with (
        Runner(Agent("assistant", model)) as runner,
        pytest.raises(error, match="must be a non-empty str"),
    ):
        drive(runner, mode, "hi", **ids)
    assert model.requests == []


@pytest.mark.parametrize("args", [{"request": 5}, {"query": "x"}, {}])
def test_sub_agent_called_with_bad_args_gets_a_tool_arguments_error(
    mode: Mode, args: dict[str, object]
) -> None:
    """A sub-agent tool called without one str ``request`` is a tool error the model sees."""
    sub = Agent("helper", ScriptedModel(default="sub"))
    model = ScriptedModel([calling(ToolCall("c1", "helper", args)), "done"])
    with Runner(Agent("assistant", model, sub_agents=[sub])) as runner:
        result = drive(runner, mode, "go")
    [event] = events_of(result, ToolResultEvent)
    assert event.result.is_error
    assert event.result.content.startswith("ToolArgumentsError: ")


def stop_iteration_tool() -> str:
    """A tool that raises StopIteration, as a generator-based helper might."""
    raise StopIteration


def test_a_sync_tool_raising_stop_iteration_is_a_tool_error_in_both_modes(mode: Mode) -> None:
    """Run on a worker thread in ``arun``, it does not hang the run: the model is told."""
    model = ScriptedModel([calling(ToolCall("c1", "stop_iteration_tool", {})), "done"])
    with Runner(Agent("assistant", model, tools=[stop_iteration_tool])) as runner:
        result = drive(runner, mode, "go")
    assert result.output == "done"
    [event] = events_of(result, ToolResultEvent)
    assert event.result == ToolResult("StopIteration: ", is_error=True)


class StopIterationGuard:
    """A before_model hook raising StopIteration."""

    def before_model(self, ctx: Any, /) -> Any:
        """Raise."""
        raise StopIteration("from the guard")


def test_a_callbacks_stop_iteration_keeps_its_type_in_a_sync_run() -> None:
    """``run`` raises the callback's own ``StopIteration``, with the note naming it."""
    with (
        Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner,
        pytest.raises(StopIteration) as caught,
    ):
        runner.run("hi", callbacks=[StopIterationGuard()])
    assert any("before_model" in note for note in caught.value.__notes__)


def test_a_callbacks_stop_iteration_is_the_cause_in_an_async_run() -> None:
    """No coroutine can raise ``StopIteration``: ``arun`` raises Python's RuntimeError
    with the callback's annotated ``StopIteration`` as its cause, and never hangs."""
    with (
        Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner,
        pytest.raises(RuntimeError) as caught,
    ):
        asyncio.run(runner.arun("hi", callbacks=[StopIterationGuard()]))
    cause = caught.value.__cause__
    assert isinstance(cause, StopIteration)
    assert any("before_model" in note for note in cause.__notes__)


class Exploding:
    """An after_tool hook that raises for a named call."""

    def __init__(self, *names: str) -> None:
        self.names = names

    def after_tool(self, outcome: Any, ctx: ToolContext, /) -> Any:
        """Raise for the named calls, after a pause so both are in flight."""
        if ctx.call.id in self.names:
            raise ValueError(f"bad {ctx.call.id}")
        return outcome


async def slow_add(a: int, b: int) -> int:
    """Add after a short pause."""
    await asyncio.sleep(0.01)
    return a + b


def test_errors_of_concurrent_tool_calls_are_all_reported() -> None:
    """The first error is raised; the other call's error is in its notes, not dropped."""
    calls = (
        ToolCall("a", "slow_add", {"a": 1, "b": 1}),
        ToolCall("b", "slow_add", {"a": 2, "b": 2}),
    )
    model = ScriptedModel([calling(*calls), "done"])
    with (
        Runner(Agent("assistant", model, tools=[slow_add])) as runner,
        pytest.raises(ValueError, match="bad") as caught,
    ):
        asyncio.run(runner.arun("go", callbacks=[Exploding("a", "b")]))
    first = str(caught.value)
    other = "b" if first == "bad a" else "a"
    assert any(f"ValueError: bad {other}" in note for note in caught.value.__notes__)


class StopObserver:
    """An observer that stops the run when it sees the first tool dispatch."""

    def on_event(self, event: HookEvent, /) -> None:
        """Stop on ``before_tool``."""
        if event.point == "before_tool":
            raise StopRun("observer saw enough")


def test_an_observer_may_stop_the_run(mode: Mode) -> None:
    """``StopRun`` from ``on_event`` ends the run as from any callback; other errors are logged."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "done"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "go", callbacks=[StopObserver()])
    assert result.status == "stopped"
    assert result.stop_reason == "observer saw enough"
    assert events_of(result, ToolResultEvent) == []


class Halting:
    """Halts every tool call."""

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext] | Halt[ToolResult]:
        """Refuse."""
        return Halt(ToolResult("no", is_error=True))


def test_hook_events_name_the_deciding_callback_and_the_run(mode: Mode) -> None:
    """Observers can tell which guard halted and which run it was in."""
    seen: list[HookEvent] = []
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "done"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "go", callbacks=[Guard(), Halting(), observing(seen.append)])
    [halt] = [e for e in seen if e.point == "before_tool"]
    assert (halt.outcome, halt.callback) == ("halt", "Halting instance")
    assert {e.run_id for e in seen} == {result.run_id}
    assert len(result.run_id) == 32
    [model_event] = [e for e in seen if e.point == "before_model"][:1]
    assert model_event.callback is None  # Guard went on with the same context


class Flaky:
    """A callback that raises at before_model, and one that halts after it."""

    def before_model(self, ctx: Any, /) -> Any:
        """Raise."""
        raise RuntimeError("flaky plugin")


class Answer:
    """Halts the model call with a canned answer."""

    def before_model(self, ctx: Any, /) -> Any:
        """Answer."""
        return Halt(ModelResponse("canned"))


def test_the_runners_policy_applies_to_every_dispatch(mode: Mode) -> None:
    """``Runner(policy=...)`` reaches dispatch: continue_on_error runs the rest, then raises."""
    with (
        Runner(Agent("assistant", ScriptedModel(default="model"))) as plain,
        pytest.raises(RuntimeError, match="flaky"),
    ):
        drive(plain, mode, "hi", callbacks=[Flaky(), Answer()])
    log: list[str] = []

    class Log:
        def before_model(self, ctx: Any, /) -> Any:
            log.append("ran")
            return Cont(ctx)

    policy = DispatchPolicy(continue_on_error=True)
    agent = Agent("assistant", ScriptedModel(default="model"))
    with Runner(agent, policy=policy) as runner, pytest.raises(RuntimeError, match="flaky"):
        drive(runner, mode, "hi", callbacks=[Flaky(), Log()])
    assert log == ["ran"]


COUNT = StateKey[int]("count")


class Counter:
    """Counts model calls in the invocation state."""

    def before_model(self, ctx: Any, /) -> Any:
        """Count atomically."""
        ctx.invocation.state.update(COUNT, lambda n: (n or 0) + 1)
        return Cont(ctx)


def test_the_result_holds_a_read_only_snapshot_of_the_state(mode: Mode) -> None:
    """``result.state`` is the state at the end of the run, and cannot be changed."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "done"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "go", callbacks=[Counter()])
    assert result.state == {"count": 2}
    with pytest.raises(TypeError):
        result.state["count"] = 3  # type: ignore[index]


def test_the_results_state_reads_typed_keys_as_the_runs_state_does(mode: Mode) -> None:
    """``result.state.get(COUNT)``, ``result.state[COUNT]`` and ``COUNT in result.state`` read
    what the run wrote through the key, as on ``State``; a missing key gives the default."""
    model = ScriptedModel([calling(ToolCall("c1", "add", {"a": 1, "b": 2})), "done"])
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "go", callbacks=[Counter()])
    count: int | None = result.state.get(COUNT)
    assert count == 2
    assert result.state[COUNT] == 2
    assert COUNT in result.state  # type: ignore[comparison-overlap]  # a Mapping[str, ...]
    missing = StateKey[int]("missing")
    assert result.state.get(missing) is None
    assert result.state.get(missing, 7) == 7
    assert missing not in result.state  # type: ignore[comparison-overlap]
    with pytest.raises(KeyError):
        result.state[missing]


class SlowModel:
    """A sync model that sleeps, as a blocking HTTP client would."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Block for 50 ms, then answer."""
        time.sleep(0.05)
        return ModelResponse("slow")


def test_a_sync_model_in_run_async_does_not_block_the_event_loop() -> None:
    """While a sync model blocks, the event loop keeps running other tasks."""

    async def main() -> int:
        ticks = 0
        done = asyncio.Event()

        async def tick() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        ticker = asyncio.ensure_future(tick())
        with Runner(Agent("assistant", SlowModel())) as runner:
            result = await runner.arun("hi")
        done.set()
        await ticker
        assert result.output == "slow"
        return ticks

    assert asyncio.run(main()) > 5


def test_a_given_executor_runs_sync_work_and_is_not_shut_down() -> None:
    """``Runner(executor=...)`` runs sync models and tools there; the runner does not own it."""
    names: list[str] = []

    def where(a: int) -> str:
        names.append(threading.current_thread().name)
        return "ok"

    model = ScriptedModel([calling(ToolCall("c1", "where", {"a": 1})), "done"])
    with ThreadPoolExecutor(thread_name_prefix="mine") as pool:
        with Runner(Agent("assistant", model, tools=[where]), executor=pool) as runner:
            asyncio.run(runner.arun("go"))
        assert pool.submit(lambda: 1).result() == 1  # still open after the runner closed
    assert names[0].startswith("mine")


def test_close_during_a_run_lets_it_finish_and_refuses_new_ones() -> None:
    """A run under way when ``close()`` is called completes and saves; a new run is refused."""

    async def main() -> None:
        started = asyncio.Event()
        release = asyncio.Event()

        async def wait_tool() -> str:
            started.set()
            await release.wait()
            return "waited"

        model = ScriptedModel([calling(ToolCall("c1", "wait_tool", {})), "done"])
        runner = Runner(Agent("assistant", model, tools=[wait_tool]))
        task = asyncio.ensure_future(runner.arun("go", session_id="s"))
        await started.wait()
        runner.close()  # returns at once: never blocks the loop
        assert runner.closed
        with pytest.raises(RuntimeError, match="closed"):
            await runner.arun("another")
        release.set()
        result = await task
        assert result.status == "completed"
        assert [e.result.content for e in events_of(result, ToolResultEvent)] == ["waited"]
        store = runner.sessions
        assert isinstance(store, InMemorySessions)
        assert len(store) == 0  # its own store released once the last run ended

    asyncio.run(main())


def test_retry_policy_overflow_does_not_break_a_run() -> None:
    """Large attempt numbers give the capped delay, never an OverflowError."""
    policy = RetryPolicy(max_attempts=2000, base_delay=0.5, max_delay=2.0, jitter=0.0)
    assert policy.delay(1025) == 2.0
    assert policy.delay(10**6) == 2.0


def test_tool_args_mapping_reaches_function_tools_as_keywords(mode: Mode) -> None:
    """A sanity check of the executor path: args as keywords, the result as text."""
    seen: list[Mapping[str, Any]] = []

    def echo(text: str) -> str:
        seen.append({"text": text})
        return text.upper()

    model = ScriptedModel([calling(ToolCall("c1", "echo", {"text": "hi"})), "done"])
    with Runner(Agent("assistant", model, tools=[echo])) as runner:
        result = drive(runner, mode, "go")
    assert seen == [{"text": "hi"}]
    assert events_of(result, ToolResultEvent)[0].result.content == "HI"


def test_a_tool_call_with_non_mapping_args_is_refused_when_made() -> None:
    """A model adapter cannot build a call whose args are no mapping: the error names it."""
    with pytest.raises(TypeError, match=r"ToolCall\.args must be a mapping"):
        ToolCall("c1", "helper", ["not", "a", "dict"])  # type: ignore[arg-type]


# -- what each refusal says, defaults, closing, errors alongside --------------------


@pytest.mark.parametrize(
    ("kwargs", "name", "hint"),
    [
        ({"agent": "assistant"}, "agent", "Runner drives an Agent"),
        ({"retry": 3}, "retry", "pass a RetryPolicy(...)"),
        ({"policy": True}, "policy", "pass a DispatchPolicy(...)"),
        (
            {"sessions": {}},
            "sessions",
            "a store has load, save, delete, acquire, release, save_paused, load_paused, "
            "delete_paused; this one has no load, save, delete, acquire, release, "
            "save_paused, load_paused, delete_paused",
        ),
        ({"executor": 4}, "executor", "e.g. a ThreadPoolExecutor"),
        ({"rng": 7}, "rng", "e.g. random.Random(seed)"),
    ],
)
def test_each_bad_runner_argument_is_named_with_a_hint(
    kwargs: dict[str, Any], name: str, hint: str
) -> None:
    """The message starts with the argument's name and ends with what to pass instead."""
    arguments: dict[str, Any] = {"agent": Agent("assistant", ScriptedModel()), **kwargs}
    with pytest.raises(TypeError) as caught:
        Runner(**arguments)
    message = str(caught.value)
    assert message.startswith(f"{name} must be a ")
    assert message.endswith(f", got {type(kwargs[name]).__name__}; {hint}")


def test_a_bad_max_steps_is_named() -> None:
    """``max_steps`` is named in its refusal."""
    with pytest.raises(ValueError, match=r"^max_steps must be a positive int, got 0$"):
        Runner(Agent("assistant", ScriptedModel()), max_steps=0)


def test_runner_defaults() -> None:
    """A runner allows 25 model turns, starts open, and runs for user ``"user"`` by default."""
    users: list[str] = []

    class Who:
        def before_model(self, ctx: Any, /) -> Any:
            """Note the user."""
            users.append(ctx.invocation.user_id)
            return Cont(ctx)

    with Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner:
        assert (runner.max_steps, runner.closed) == (25, False)
        runner.run("hi", callbacks=[Who()])
        asyncio.run(runner.arun("hi", callbacks=[Who()]))
    assert users == ["user", "user"]


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ({"user_id": 7}, "user_id must be a non-empty str, got int 7"),
        ({"user_id": ""}, "user_id must be a non-empty str, got str ''"),
        ({"session_id": None, "user_id": b"u"}, "user_id must be a non-empty str, got bytes b'u'"),
        ({"session_id": ""}, "session_id must be a non-empty str, got str ''"),
        ({"session_id": 7}, "session_id must be a non-empty str, got int 7"),
    ],
)
def test_bad_ids_are_named_with_what_was_got(mode: Mode, ids: dict[str, Any], message: str) -> None:
    """Each refused id is named, with the type and value it was given."""
    with (
        Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner,
        pytest.raises((TypeError, ValueError)) as caught,
    ):
        drive(runner, mode, "hi", **ids)
    assert str(caught.value) == message


def test_a_run_of_something_else_than_text_names_what_it_got(mode: Mode) -> None:
    """A message that is no str or ``Message`` is refused naming its type."""
    with (
        Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner,
        pytest.raises(TypeError) as caught,
    ):
        drive(runner, mode, 42)  # type: ignore[arg-type]
    assert str(caught.value) == "a run takes a str or a Message, got int"


def test_run_inside_a_running_loop_says_what_to_use() -> None:
    """The refusal names the method called and the one to await instead."""

    async def main(runner: Runner) -> str:
        with pytest.raises(RuntimeError) as caught:
            runner.run("hi")
        return str(caught.value)

    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        message = asyncio.run(main(runner))
    assert message == (
        "Runner.run() was called inside a running event loop; use await runner.arun()"
    )


def test_closing_never_waits_for_a_cancelled_runs_tool_thread() -> None:
    """When the last run ends with a sync tool still on a pool thread, the loop does not wait."""
    started = threading.Event()
    release = threading.Event()
    finished: list[str] = []

    def hold() -> str:
        """Block until released (at most a second)."""
        started.set()
        release.wait(1.0)
        finished.append("hold")
        return "held"

    async def main() -> list[str]:
        model = ScriptedModel([calling(ToolCall("c1", "hold")), "done"])
        runner = Runner(Agent("assistant", model, tools=[hold]))
        task = asyncio.ensure_future(runner.arun("go"))
        while not started.is_set():
            await asyncio.sleep(0.001)
        runner.close()  # a run is under way: nothing is released yet
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task  # the last run ends here: the runner's pool is shut down
        return list(finished)

    try:
        assert asyncio.run(main()) == []  # the tool was still running when the run ended
    finally:
        release.set()


class ChainedGuard:
    """A before_model hook raising a ``RuntimeError`` that merely looks like PEP 479's."""

    def __init__(self, error: RuntimeError) -> None:
        self.error = error

    def before_model(self, ctx: Any, /) -> Any:
        """Raise the error."""
        raise self.error


def chained() -> RuntimeError:
    """A ``RuntimeError`` whose cause is a ``StopIteration``, as a callback may raise."""
    try:
        raise RuntimeError("guard failed") from StopIteration("inner")
    except RuntimeError as error:
        return error


@pytest.mark.parametrize(
    "error",
    [chained(), RuntimeError("generator raised StopIteration")],
    ids=["caused-by-stop-iteration", "same-words-no-cause"],
)
def test_a_callbacks_own_runtime_error_is_raised_as_it_is(mode: Mode, error: RuntimeError) -> None:
    """Only Python's PEP 479 wrapper is unwrapped: a callback's ``RuntimeError`` stays itself."""
    with (
        Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner,
        pytest.raises(RuntimeError) as caught,
    ):
        drive(runner, mode, "hi", callbacks=[ChainedGuard(error)])
    assert caught.value is error


async def wait_long() -> str:
    """Wait far longer than the test, unless cancelled."""
    await asyncio.sleep(5)
    return "late"


def test_calls_cancelled_alongside_a_failing_call_are_not_reported() -> None:
    """Only calls that raised are noted on the first error: a cancelled call raised nothing."""
    calls = (ToolCall("a", "slow_add", {"a": 1, "b": 1}), ToolCall("b", "wait_long"))
    model = ScriptedModel([calling(*calls), "done"])
    with (
        Runner(Agent("assistant", model, tools=[slow_add, wait_long])) as runner,
        pytest.raises(ValueError, match="bad a") as caught,
    ):
        asyncio.run(runner.arun("go", callbacks=[Exploding("a")]))
    assert not any("alongside" in note for note in caught.value.__notes__)


def test_a_sub_agents_bad_args_error_names_the_tool_the_problem_and_the_args(mode: Mode) -> None:
    """The model is told which sub-agent, what it takes and what it got."""
    sub = Agent("helper", ScriptedModel(default="sub"))
    model = ScriptedModel([calling(ToolCall("c1", "helper", {"request": 5})), "done"])
    with Runner(Agent("assistant", model, sub_agents=[sub])) as runner:
        result = drive(runner, mode, "go")
    [event] = events_of(result, ToolResultEvent)
    assert event.result.content == (
        "ToolArgumentsError: bad arguments for tool 'helper': a sub-agent takes one str "
        "argument 'request'; got {'request': 5}"
    )


def test_the_result_sums_the_usage_of_every_model_call(mode: Mode) -> None:
    """Each answer's tokens count once, sub-agents' and discarded attempts' included."""
    sub = Agent("helper", ScriptedModel([ModelResponse("sub", usage=Usage(5, 1, 2, 0))]))
    model = ScriptedModel(
        [
            ModelResponse(
                tool_calls=(ToolCall("c1", "helper", {"request": "x"}),),
                usage=Usage(10, 2, 4, 1),
                finish_reason="tool_calls",
            ),
            ModelResponse("done", usage=Usage(20, 3), finish_reason="stop"),
        ]
    )
    with Runner(Agent("assistant", model, sub_agents=[sub])) as runner:
        result = drive(runner, mode, "go")
    assert result.usage == Usage(35, 6, 6, 1)
    assert result.usage.total_tokens == 41
    assert result.response is not None
    assert result.response.finish_reason == "stop"


def test_a_run_without_usage_reports_zero(mode: Mode) -> None:
    """Models that do not say what they used leave the run's usage at zero."""
    with Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner:
        assert drive(runner, mode, "hi").usage == Usage()


class DualModel:
    """A model with a sync ``generate`` and an ``async def agenerate``."""

    def __init__(self) -> None:
        self.used: list[str] = []

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The sync path."""
        self.used.append(threading.current_thread().name)
        return ModelResponse("sync")

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """The async path, on the event loop."""
        self.used.append("agenerate")
        return ModelResponse("async")


def test_a_model_with_agenerate_is_awaited_in_async_runs_and_called_in_sync_ones() -> None:
    """``run`` calls ``generate``; ``arun`` awaits ``agenerate``, no thread hop."""
    model = DualModel()
    with Runner(Agent("assistant", model)) as runner:
        assert runner.run("hi").output == "sync"
        assert asyncio.run(runner.arun("hi")).output == "async"
    assert model.used == [threading.current_thread().name, "agenerate"]


def test_a_fallback_answers_usage_counts_in_the_run() -> None:
    """A backup model's answer, given as a ``Fallback``, was paid for: its tokens count."""
    from runner import FallbackModel

    backup = ScriptedModel([ModelResponse("backup", usage=Usage(7, 3))])
    primary = ScriptedModel([ConnectionError("down")])
    with Runner(Agent("assistant", primary), retry=RetryPolicy(max_attempts=1)) as runner:
        result = runner.run("hi", callbacks=[FallbackModel(backup)])
    assert result.output == "backup"
    assert result.usage == Usage(7, 3)


class PlainWrap:
    """A plain def tool wrap: what a sync run takes and an async run refuses."""

    def wrap_tool(self, ctx: ToolContext, call_next: Any, /) -> Any:
        """Call on."""
        return call_next(ctx)


def test_a_plain_wrap_refused_by_run_async_is_named_with_the_fix() -> None:
    """The refusal names the callback and its wrap, says why, and which protocol to use."""
    wrap = PlainWrap()
    with (
        Runner(Agent("assistant", ScriptedModel(["ok"]))) as runner,
        pytest.raises(InvalidCallbacks) as caught,
    ):
        asyncio.run(runner.arun("hi", callbacks=[wrap]))
    assert str(caught.value) == (
        "PlainWrap instance.wrap_tool is a plain def; an async run awaits call_next, "
        "so its wraps must be async def (AsyncWrapModel / AsyncWrapTool)"
    )
    assert (caught.value.callback, caught.value.attribute) == (wrap, "wrap_tool")


def test_a_stream_opens_with_the_runs_ids_and_closes_with_its_result() -> None:
    """Start names the run, its session and agent; finish carries the result; both are timed."""
    users: list[str] = []

    class Who:
        def before_model(self, ctx: Any, /) -> Any:
            """Note the user."""
            users.append(ctx.invocation.user_id)
            return Cont(ctx)

    async def main(runner: Runner) -> list[StreamEvent]:
        return [event async for event in runner.stream("hi", session_id="s", callbacks=[Who()])]

    start = time.time()
    with Runner(Agent("assistant", AsyncScripted(ScriptedModel(["ok"])))) as runner:
        events = asyncio.run(main(runner))
    end = time.time()
    first, last = events[0], events[-1]
    assert isinstance(first, RunStartedEvent)
    assert isinstance(last, RunFinishedEvent)
    assert (first.run_id, first.session_id, first.agent) == (last.result.run_id, "s", "assistant")
    assert (last.result.output, last.result.session_id) == ("ok", "s")
    assert start <= first.time <= last.time <= end
    assert users == ["user"]


def test_a_stream_closed_early_has_cancelled_its_run_when_aclose_returns() -> None:
    """A consumer that stops gets the run cancelled and awaited, not left running."""
    cancelled: list[str] = []

    async def wait_tool() -> str:
        """Wait far longer than the test, unless cancelled."""
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append("wait_tool")
            raise
        return "late"

    async def main(runner: Runner) -> list[str]:
        stream = runner.stream("go")
        async for event in stream:
            if isinstance(event, ToolAttemptEvent):
                break
        await stream.aclose()
        return list(cancelled)

    model = ScriptedModel([calling(ToolCall("c1", "wait_tool")), "unreached"])
    with Runner(Agent("assistant", model, tools=[wait_tool])) as runner:
        assert asyncio.run(main(runner)) == ["wait_tool"]


class MisnamedGuard:
    """A deny-everything guard named as other libraries name their hooks: never called."""

    def __init__(self, log: list[str]) -> None:
        self.log = log

    def before_tool_call(self, ctx: ToolContext, /) -> Any:
        """Deny every tool (if it were ever called)."""
        self.log.append("guard")
        return Halt(ToolResult("denied"))


@pytest.mark.parametrize("where", ["run", "runner", "agent"])
def test_a_misnamed_guard_refuses_the_run_before_anything_runs(mode: Mode, where: str) -> None:
    """A guard whose only method is a peer's hook name refuses the run with a did-you-mean,
    whether given to the run, the runner or the agent: the tool never runs unguarded."""
    log: list[str] = []
    guard = MisnamedGuard(log)
    ran: list[str] = []

    def dangerous(path: str) -> str:
        """Delete ``path``."""
        ran.append(path)
        return "deleted"

    model = ScriptedModel([calling(ToolCall("c1", "dangerous", {"path": "/etc"})), "done"])
    agent = Agent(
        "assistant", model, tools=[dangerous], callbacks=[guard] if where == "agent" else []
    )
    with (
        Runner(agent, callbacks=[guard] if where == "runner" else []) as runner,
        pytest.raises(InvalidCallbacks, match="did you mean 'before_tool'") as caught,
    ):
        drive(runner, mode, "go", callbacks=[guard] if where == "run" else [])
    assert (caught.value.callback, caught.value.attribute) == (guard, "before_tool_call")
    assert ran == []
    assert log == []
    assert model.calls == 0  # refused before the model was asked anything
