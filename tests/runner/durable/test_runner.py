"""``DurableRunner`` in one process: runs as workflows, idempotent ids, errors, sessions, keys."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Mapping
from typing import Any

import pytest
from dbos import DBOS

from hooks import (
    Approve,
    BeforeTool,
    Cont,
    Decision,
    Edit,
    ErrorResult,
    Failure,
    OnToolError,
    PausableResult,
    Pause,
    Reject,
    Retry,
)
from runner import (
    Agent,
    DurableRunner,
    InMemorySessions,
    InvalidDecisions,
    ModelRequest,
    ModelResponse,
    ResumeRefused,
    RetryEvent,
    RetryPolicy,
    Runner,
    RunResult,
    RunState,
    ScriptedModel,
    Session,
    StopRun,
    ToolCall,
    ToolContext,
    ToolResult,
    Usage,
    idempotency_key,
    load_events,
)
from runner._durable.codec import RecoveredError
from runner._pause.pending import request_id
from tests.helpers import ROOT, runs
from tests.helpers.durable import Booking, drive_durable, durable, recorded, unique, untimed
from tests.helpers.runs import Mode

pytestmark = [pytest.mark.durable, pytest.mark.usefixtures("launched")]


class Tools:
    """Booking tools that count their executions and keep the idempotency key each saw."""

    def __init__(self) -> None:
        self.keys: list[tuple[str, str | None]] = []

    def flight(self, city: str) -> str:
        """Book a flight to ``city``."""
        self.keys.append(("flight", _key()))
        return f"flight to {city}"

    def hotel(self, city: str) -> str:
        """Book a hotel in ``city``."""
        self.keys.append(("hotel", _key()))
        return f"hotel in {city}"

    def ran(self) -> list[str]:
        """The tools executed, in order."""
        return [name for name, _ in self.keys]


def _key() -> str | None:
    try:
        return idempotency_key()
    except LookupError:
        return None


def trip(tools: Tools, model: object | None = None, *, name: str = "trip") -> Agent:
    """An agent that books a flight then a hotel with ``tools``."""
    chosen = Booking("flight", "hotel") if model is None else model
    return Agent(name, chosen, tools=[tools.flight, tools.hotel])  # type: ignore[call-overload,no-any-return]


def test_a_durable_run_leaves_what_a_plain_run_leaves(mode: Mode) -> None:
    """Same output, status and events (times aside) as ``Runner`` on the same agent."""
    plain = runs.drive(Runner(trip(Tools())), mode, "book Paris")
    result = drive_durable(durable(trip(Tools())), mode, "book Paris")
    assert (result.output, result.status) == ("Done: flight to Paris; hotel in Paris.", "completed")
    assert untimed(result) == untimed(plain)


def test_each_model_and_tool_call_is_a_step_named_for_it(mode: Mode) -> None:
    """The workflow's steps: session load, model, tool, model, tool, model, session save,
    the run's records' save."""
    result = drive_durable(durable(trip(Tools())), mode, "book Paris", run_id=unique("steps"))
    names = [step["function_name"] for step in DBOS.list_workflow_steps(result.run_id)]
    assert names == [
        "session load",
        "model trip",
        "tool trip flight",
        "model trip",
        "tool trip hotel",
        "model trip",
        "session save",
        "records save",
    ]


def test_the_same_run_id_returns_the_recorded_result_and_runs_nothing(mode: Mode) -> None:
    """A second run with the id, even with another message, is the first one's result."""
    tools, model = Tools(), Booking("flight", "hotel")
    runner, run_id = durable(trip(tools, model)), unique("idempotent")
    first = drive_durable(runner, mode, "book Paris", run_id=run_id)
    again = drive_durable(runner, mode, "book Rome instead", run_id=run_id)
    assert again == first
    assert first.run_id == run_id
    assert (tools.ran(), model.calls) == (["flight", "hotel"], 3)
    assert runner.result(run_id) == first


def test_a_run_id_of_another_runner_is_refused() -> None:
    """An id that names another durable runner's run is a ValueError naming both."""
    run_id = unique("taken")
    durable(trip(Tools())).run("book Paris", run_id=run_id)
    other = durable(trip(Tools(), name="other"))
    with pytest.raises(ValueError, match=rf"{run_id}.*hookline:trip_\d+.*hookline:other_\d+"):
        other.run("book Paris", run_id=run_id)


def test_tools_get_the_run_step_and_call_as_idempotency_key(mode: Mode) -> None:
    """``idempotency_key()`` is ``run:step:call`` in each tool, the thread pool's too."""
    tools = Tools()
    result = drive_durable(durable(trip(tools)), mode, "book Paris", run_id=unique("keys"))
    assert tools.keys == [
        ("flight", f"{result.run_id}:3:call_1"),
        ("hotel", f"{result.run_id}:5:call_2"),
    ]


def test_outside_a_durable_run_a_tool_has_no_key(mode: Mode) -> None:
    """A plain run's tool asking for a key gets a LookupError naming the durable runner."""
    tools = Tools()
    runs.drive(Runner(trip(tools)), mode, "book Paris")
    assert tools.keys == [("flight", None), ("hotel", None)]
    with pytest.raises(LookupError, match="inside a tool call of a durable run"):
        idempotency_key()


def test_an_unrecovered_model_error_is_raised_as_itself_for_the_same_id_too(mode: Mode) -> None:
    """The model's error fails the run with its own type, and the id keeps failing alike."""
    model = ScriptedModel([PermissionError("the key was revoked")])
    runner, run_id = durable(Agent("failing", model)), unique("failed")
    for _ in range(2):
        with pytest.raises(PermissionError, match="the key was revoked"):
            drive_durable(runner, mode, "hello", run_id=run_id)
    assert model.calls == 1


def test_a_stop_run_ends_the_durable_run_stopped(mode: Mode) -> None:
    """``StopRun`` from a tool ends the run with status "stopped" and its reason."""

    def halt(city: str) -> str:
        """Refuse."""
        raise StopRun(f"no trips to {city}")

    agent = Agent("stopping", Booking("halt"), tools=[halt])
    result = drive_durable(durable(agent), mode, "book Paris")
    assert (result.status, result.stop_reason) == ("stopped", "no trips to Paris")


def test_a_session_is_loaded_and_saved_once_per_run(mode: Mode) -> None:
    """Two runs on one session: the second's request holds the first's turn, saved once."""
    sessions = InMemorySessions()
    model = ScriptedModel(default="hi")
    runner = durable(Agent("chat", model), sessions=sessions)
    first = drive_durable(runner, mode, "hello", session_id="s1")
    drive_durable(runner, mode, "again", session_id="s1")
    assert [m.content for m in model.requests[-1].messages] == ["hello", "hi", "again"]
    saved = sessions.load("user", "s1")
    assert (saved.version, len(saved.messages)) == (2, 4)
    assert first.session_id == "s1"


class Unreachable(Exception):
    """A store's error whose ``__init__`` takes a keyword only."""

    def __init__(self, *, host: str) -> None:
        super().__init__(f"{host} is unreachable")
        self.host = host


class Down:
    """A session store whose database cannot be reached when a run loads its session."""

    def __init__(self) -> None:
        self.inner = InMemorySessions()

    def load(self, user_id: str, session_id: str, /) -> Session:
        """Fail."""
        raise Unreachable(host="db.internal")

    def save(self, *args: Any, **kwargs: Any) -> int:
        """The inner store's."""
        return self.inner.save(*args, **kwargs)

    def delete(self, *args: Any) -> None:
        """The inner store's."""
        self.inner.delete(*args)

    def acquire(self, *args: Any, **kwargs: Any) -> None:
        """The inner store's."""
        self.inner.acquire(*args, **kwargs)

    def release(self, *args: Any, **kwargs: Any) -> None:
        """The inner store's."""
        self.inner.release(*args, **kwargs)

    def save_paused(self, *args: Any) -> None:
        """The inner store's."""
        self.inner.save_paused(*args)

    def load_paused(self, run_id: str, /) -> str | None:
        """The inner store's."""
        return self.inner.load_paused(run_id)

    def delete_paused(self, run_id: str, /) -> None:
        """The inner store's."""
        self.inner.delete_paused(run_id)


def test_a_session_store_s_error_fails_the_run_with_its_own_type(mode: Mode) -> None:
    """A store that cannot load: the run fails with the store's error, rebuilt whatever its
    ``__init__`` wants, its class being one of the runner's ``errors``."""
    runner = durable(
        Agent("down", ScriptedModel(default="hi")), sessions=Down(), errors=[Unreachable]
    )
    with pytest.raises(Unreachable, match=r"db\.internal is unreachable") as raised:
        drive_durable(runner, mode, "hello")
    assert raised.value.host == "db.internal"


def test_an_error_of_a_class_no_runner_allowed_fails_the_run_as_a_recovered_error(
    mode: Mode,
) -> None:
    """The same store error under a runner that does not name its class: a ``RecoveredError``
    with the class's name, the message and the JSON attributes; no class made from a record."""
    runner = durable(Agent("down", ScriptedModel(default="hi")), sessions=Down())
    with pytest.raises(RecoveredError, match=r"^db\.internal is unreachable$") as raised:
        drive_durable(runner, mode, "hello")
    assert raised.value.type_name in {
        f"{__name__}:Unreachable",
        f"{__name__}:{Unreachable.__qualname__}",
    }
    assert raised.value.host == "db.internal"  # type: ignore[attr-defined]


class AskFirst(BeforeTool):
    """Pauses every tool call for a human until one decides."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause on a first pass; go on once a decision is in."""
        return Pause(f"book {ctx.call.args['city']}?") if ctx.decision is None else Cont(ctx)


def test_a_paused_durable_run_ends_its_workflow_paused_with_its_state_stored(mode: Mode) -> None:
    """A hook's ``Pause``: the run ends "paused" with its request, its state is in the store
    (a step after the loop), and the id keeps answering with that result."""
    tools, sessions = Tools(), InMemorySessions()
    runner = durable(trip(tools), callbacks=[AskFirst()], sessions=sessions)
    run_id = unique("paused")
    result = drive_durable(runner, mode, "book Paris", run_id=run_id)
    assert result.status == "paused"
    assert [request.reason for request in result.pending] == ["book Paris?"]
    assert tools.ran() == []
    stored = runner.paused(run_id)
    assert stored is not None
    assert stored.to_json() == result.state.to_json()
    names = [step["function_name"] for step in DBOS.list_workflow_steps(run_id)]
    assert names == ["session load", "model trip", "paused save", "records save"]
    assert runner.run("book Paris", run_id=run_id).pending == result.pending


def resume_durable(
    runner: DurableRunner, mode: Mode, state: RunState, decisions: Mapping[str, Decision]
) -> RunResult:
    """``resume`` in sync mode, ``aresume`` otherwise."""
    if mode == "sync":
        return runner.resume(state, decisions)
    return asyncio.run(runner.aresume(state, decisions))


def test_a_paused_durable_run_resumes_as_a_workflow_of_its_own(mode: Mode) -> None:
    """The resume runs the approved call and the rest as steps of its own workflow, saves
    the session once, forgets the paused state, and answers as the same run."""
    tools, sessions = Tools(), InMemorySessions()
    runner = durable(trip(tools), callbacks=[AskFirst()], sessions=sessions)
    run_id = unique("resumed")
    paused = drive_durable(runner, mode, "book Paris", run_id=run_id, session_id="s")
    (flight,) = paused.pending
    after_flight = resume_durable(runner, mode, paused.state, {flight.id: Approve()})
    assert (after_flight.status, after_flight.run_id) == ("paused", run_id)
    (hotel,) = after_flight.pending
    assert hotel.call.name == "hotel"
    done = resume_durable(runner, mode, after_flight.state, {hotel.id: Edit({"city": "Nice"})})
    assert (done.status, done.output) == ("completed", "Done: flight to Paris; hotel in Nice.")
    assert tools.ran() == ["flight", "hotel"]
    assert runner.paused(run_id) is None
    assert [m.content for m in sessions.load("user", "s").messages][-1] == done.output
    resumes = [
        status.workflow_id
        for status in DBOS.list_workflows()
        if status.workflow_id.startswith(f"{run_id}:resume:")
    ]
    assert len(resumes) == 2
    names = [step["function_name"] for step in DBOS.list_workflow_steps(resumes[-1])]
    assert names[:2] == ["session load", "paused load"]
    assert names[-3:] == ["session save", "records save", "paused delete"]


def test_a_paused_durable_run_is_listed_and_keeps_its_records(mode: Mode) -> None:
    """An inbox sees a durable run's pause: ``list_paused`` lists it with its requests; its
    records are kept, the resumed part's after the paused part's, each once."""
    sessions = InMemorySessions()
    runner = durable(trip(Tools()), callbacks=[AskFirst()], sessions=sessions)
    run_id = unique("inbox")
    paused = drive_durable(runner, mode, "book Paris", run_id=run_id, session_id="s")
    (listed,) = [run for run in sessions.list_paused() if run.run_id == run_id]
    assert (listed.user_id, listed.session_id, listed.pending) == ("user", "s", paused.pending)
    kept = sessions.load_records(run_id)
    assert kept is not None
    assert [type(event) for event in load_events(kept)] == [type(e) for e in paused.events]
    (flight,) = paused.pending
    resumed = resume_durable(runner, mode, paused.state, {flight.id: Approve()})
    assert resumed.run_id == run_id
    kept = sessions.load_records(run_id)
    assert kept is not None
    assert [type(event) for event in load_events(kept)] == [
        type(event) for event in (*paused.events, *resumed.events)
    ]
    assert [run.run_id for run in sessions.list_paused()].count(run_id) == 1  # paused again


def test_resuming_with_the_same_decisions_again_returns_the_same_result(mode: Mode) -> None:
    """The resume's id derives from the state and the decisions: again, nothing runs twice;
    other decisions for the resumed state are refused."""
    tools = Tools()
    runner = durable(trip(tools), callbacks=[AskFirst()], sessions=InMemorySessions())
    paused = drive_durable(runner, mode, "book Paris", run_id=unique("twice"))
    decisions: dict[str, Decision] = {paused.pending[0].id: Approve()}
    first = resume_durable(runner, mode, paused.state, decisions)
    again = resume_durable(runner, mode, paused.state, decisions)
    assert untimed(again) == untimed(first)
    assert tools.ran() == ["flight"]
    with pytest.raises(ResumeRefused, match="keeps another paused state"):
        resume_durable(runner, mode, paused.state, {paused.pending[0].id: Reject("no")})
    assert tools.ran() == ["flight"]


def test_bad_decisions_are_refused_before_any_workflow_starts() -> None:
    """``InvalidDecisions`` in the caller: no resume workflow is recorded."""
    runner = durable(trip(Tools()), callbacks=[AskFirst()], sessions=InMemorySessions())
    run_id = unique("bad")
    paused = runner.run("book Paris", run_id=run_id)
    with pytest.raises(InvalidDecisions):
        runner.resume(paused.state, {"nope": Approve()})
    assert not [s for s in DBOS.list_workflows() if s.workflow_id.startswith(f"{run_id}:")]


def test_a_durable_resume_needs_the_runner_s_callbacks_again(mode: Mode) -> None:
    """The state records the runner's callbacks: a durable runner over the same store
    without ``AskFirst`` refuses the resume before any workflow starts, nothing ran."""
    tools, sessions = Tools(), InMemorySessions()
    runner = durable(trip(tools), callbacks=[AskFirst()], sessions=sessions)
    run_id = unique("guarded")
    paused = drive_durable(runner, mode, "book Paris", run_id=run_id)
    assert paused.state.callbacks == (f"{__name__}.AskFirst",)
    bare = durable(trip(tools), sessions=sessions)
    with pytest.raises(ResumeRefused, match=r"does not bring: .*\.AskFirst;"):
        resume_durable(bare, mode, paused.state, {paused.pending[0].id: Approve()})
    assert tools.ran() == []
    assert not [s for s in DBOS.list_workflows() if s.workflow_id.startswith(f"{run_id}:")]


def test_a_durable_state_the_store_does_not_hold_is_refused(mode: Mode) -> None:
    """A state with a run id the store never saw: refused, nothing ran, nothing saved."""
    tools, sessions = Tools(), InMemorySessions()
    runner = durable(trip(tools), callbacks=[AskFirst()], sessions=sessions)
    paused = drive_durable(runner, mode, "book Paris", run_id=unique("real"), session_id="s")
    (request,) = paused.pending
    data = json.loads(paused.state.to_json())
    forged_run = unique("forged")
    forged_id = request_id(forged_run, request.branch, data["frame"]["step"], request.call.id)
    data["run_id"] = forged_run  # its request id made to match: only the store can tell
    data["frame"]["requests"][request.call.id]["id"] = forged_id
    forged = RunState.from_json(json.dumps(data))
    with pytest.raises(ResumeRefused, match="holds no paused state of it"):
        resume_durable(runner, mode, forged, {forged_id: Approve()})
    assert tools.ran() == []
    assert sessions.load("user", "s").messages == ()
    assert sessions.load_paused(forged_run) is None


def test_a_fresh_session_is_named_from_the_run_id() -> None:
    """``session_id=None``: the session's id is derived from the run id, the same every time."""
    runner = durable(Agent("fresh", ScriptedModel(default="hi")))
    one = runner.run("hello", run_id=unique("fresh"))
    two = runner.run("hello", run_id=unique("fresh"))
    assert one.session_id != two.session_id
    assert runner.result(one.run_id).session_id == one.session_id


def test_a_retry_waits_the_drawn_delay_in_a_step(mode: Mode) -> None:
    """A retried tool: the jittered wait is drawn in a step and slept durably; the record has it."""
    failures = [ConnectionError("hung up")]

    def flaky(city: str) -> str:
        """Fail once."""
        if failures:
            raise failures.pop()
        return f"booked {city}"

    class RetryAll(OnToolError):
        def on_tool_error(
            self, failure: Failure[Exception], ctx: ToolContext, /
        ) -> ErrorResult[ToolContext, ToolResult]:
            return Retry(ctx)

    agent = Agent("retrying", Booking("flaky"), tools=[flaky])
    runner = durable(agent, callbacks=[RetryAll()], retry=RetryPolicy(base_delay=0.01, jitter=1.0))
    result = drive_durable(runner, mode, "book Paris")
    [retry] = [event for event in result.events if isinstance(event, RetryEvent)]
    assert 0 <= retry.delay <= 0.02
    steps = DBOS.list_workflow_steps(result.run_id)
    names = [step["function_name"] for step in steps]
    assert names[2:6] == ["tool retrying flaky", "retry delay", "DBOS.sleep", "tool retrying flaky"]
    drawn, _ = recorded(steps[3])
    assert drawn == retry.delay


def test_usage_is_counted_once_per_answer(mode: Mode) -> None:
    """The run's usage sums its model answers, as a plain run's does."""
    model = ScriptedModel([ModelResponse("hi", usage=Usage(input_tokens=3, output_tokens=2))])
    result = drive_durable(durable(Agent("metered", model)), mode, "hello")
    assert result.usage == Usage(input_tokens=3, output_tokens=2)


def test_an_async_run_takes_one_response_s_tool_calls_one_by_one() -> None:
    """Two calls in one response run in the model's order, never side by side."""
    log: list[str] = []

    async def slow(city: str) -> str:
        """Take a while."""
        log.append("slow starts")
        await asyncio.sleep(0.05)
        log.append("slow ends")
        return "slow"

    async def quick(city: str) -> str:
        """Be quick."""
        log.append("quick")
        return "quick"

    agent = Agent("ordered", Booking("slow", "quick", calls_per_turn=2), tools=[slow, quick])
    result = asyncio.run(durable(agent).arun("go"))
    assert log == ["slow starts", "slow ends", "quick"]
    assert result.output == "Done: slow; quick."


def test_names_are_checked_and_unique_in_the_process() -> None:
    """A name taken in this process, or an empty one, is refused before DBOS sees it."""
    name = unique("named")
    DurableRunner(Agent("a", ScriptedModel()), name=name)
    with pytest.raises(ValueError, match=rf"named {name!r} already exists"):
        DurableRunner(Agent("b", ScriptedModel()), name=name)
    with pytest.raises(ValueError, match="DurableRunner name must be a non-empty str"):
        DurableRunner(Agent("c", ScriptedModel()), name="")


def test_the_codec_options_are_checked() -> None:
    """``allow_pickle`` is a bool; ``errors`` a list of module-level Exception classes."""

    class Local(Exception):
        pass

    agent = Agent("opts", ScriptedModel())
    with pytest.raises(TypeError, match="allow_pickle must be a bool, got str"):
        DurableRunner(agent, name=unique("opts"), allow_pickle="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="errors must be a list of Exception classes, got str"):
        DurableRunner(agent, name=unique("opts"), errors="ValueError")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="errors must hold Exception classes, got int 3"):
        DurableRunner(agent, name=unique("opts"), errors=[3])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="defined inside a function"):
        DurableRunner(agent, name=unique("opts"), errors=[Local])


def test_misuse_is_refused_with_what_to_do_instead() -> None:
    """run() in an event loop, an unknown queue and an unknown run id each say what is wrong."""
    runner = durable(Agent("misused", ScriptedModel(default="hi")))

    async def inside_a_loop() -> None:
        runner.run("hello")

    with pytest.raises(RuntimeError, match=r"use await runner.arun\(\)"):
        asyncio.run(inside_a_loop())
    with pytest.raises(LookupError, match=r"DBOS.register_queue\('nowhere'\)"):
        runner.enqueue("nowhere", "hello")
    with pytest.raises(LookupError, match="no durable run 'never-ran'"):
        runner.result("never-ran")
    with pytest.raises(LookupError, match="no durable run 'never-ran'"):
        asyncio.run(runner.aresult("never-ran"))
    with pytest.raises(TypeError, match="run_id must be a non-empty str"):
        runner.run("hello", run_id=3)  # type: ignore[arg-type]


def test_an_enqueued_run_is_taken_by_this_process_and_waited_for() -> None:
    """``enqueue`` puts the run on a registered queue; ``result`` waits for it."""
    DBOS.register_queue("durable-tests", polling_interval_sec=0.1)
    runner = durable(trip(Tools()))
    run_id = runner.enqueue("durable-tests", "book Paris", run_id=unique("queued"))
    assert runner.result(run_id).output == "Done: flight to Paris; hotel in Paris."


def test_without_the_extra_making_one_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no ``dbos`` importable, the ImportError gives the exact install command."""
    monkeypatch.setitem(sys.modules, "dbos", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[dbos\]'") as raised:
        DurableRunner(Agent("nodbos", ScriptedModel()))
    assert raised.value.name == "dbos"


@pytest.mark.subprocess
def test_importing_runner_imports_no_dbos() -> None:
    """``import runner`` (and naming ``DurableRunner``) loads neither DBOS nor SQLAlchemy."""
    code = (
        "import sys, runner; runner.DurableRunner; runner.idempotency_key; "
        "print(sorted({'dbos', 'sqlalchemy'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_a_model_that_reads_the_request_sees_the_durable_history() -> None:
    """A sub-agent's calls are steps too, and its answer reaches the parent's model."""
    helper = Agent("helper", ScriptedModel(default="hi"), description="Echo.")

    class Parent:
        def generate(self, request: ModelRequest, /) -> ModelResponse:
            tool = [m for m in request.messages if m.role == "tool"]
            if not tool:
                return ModelResponse(tool_calls=(ToolCall("c1", "helper", {"request": "ping"}),))
            return ModelResponse(f"helper said {tool[0].content!r}")

    result = durable(Agent("parent", Parent(), sub_agents=[helper])).run("go")
    names = [step["function_name"] for step in DBOS.list_workflow_steps(result.run_id)]
    assert names[1:4] == ["model parent", "model parent/helper", "model parent"]
    assert result.output == "helper said 'hi'"


def test_the_session_lease_is_the_durable_runner_s_to_set() -> None:
    """``session_lease`` is the durable runner's, checked like ``Runner``'s."""
    made = DurableRunner(Agent("leased", ScriptedModel()), name=unique("leased"), session_lease=5)
    assert made.session_lease == 5
    with pytest.raises(ValueError, match="session_lease"):
        DurableRunner(Agent("leased", ScriptedModel()), name=unique("leased"), session_lease=0)


class Threads(Down):
    """A working store that says nothing of blocking (so it is taken to block) and notes
    the thread each lease call ran on."""

    def __init__(self) -> None:
        super().__init__()
        self.lease_threads: list[str] = []

    def load(self, user_id: str, session_id: str, /) -> Session:
        """The inner store's."""
        return self.inner.load(user_id, session_id)

    def acquire(self, *args: Any, **kwargs: Any) -> None:
        """Note the thread, then the inner store's."""
        self.lease_threads.append(threading.current_thread().name)
        self.inner.acquire(*args, **kwargs)

    def release(self, *args: Any, **kwargs: Any) -> None:
        """Note the thread, then the inner store's."""
        self.lease_threads.append(threading.current_thread().name)
        self.inner.release(*args, **kwargs)


def test_an_async_durable_run_takes_and_gives_back_its_lease_off_the_loop() -> None:
    """On a store that blocks, ``arun`` of a durable run leaves the event loop free: the
    lease is taken and given back on the runner's store threads, as in ``Runner.arun``."""
    store = Threads()
    runner = durable(Agent("leasing", ScriptedModel(default="hi")), sessions=store)
    loop_thread = threading.current_thread().name  # asyncio.run runs the loop here
    asyncio.run(runner.arun("hello", run_id=unique("lease"), session_id="s1"))
    assert len(store.lease_threads) >= 2
    assert loop_thread not in store.lease_threads
    assert all(name.startswith("hookline-store") for name in store.lease_threads)
