"""``Runner``: drives an agent through one run, sync or async, threading every callback."""

from __future__ import annotations

import random
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Mapping, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Final, Generic, final, overload

from typing_extensions import TypeVar

from hooks import (
    Callbacks,
    Decision,
    DispatchPolicy,
    Explanation,
    Message,
)
from hooks._points import AnyPoint
from runner._agent import Agent, check_deps
from runner._checks import (
    as_message,
    check_id,
    check_type,
    refuse_inside_loop,
)
from runner._events import RunFinishedEvent, RunResult, RunStartedEvent, StreamEvent
from runner._models.deadline import DEFAULT_MODEL_DEADLINE
from runner._pause.runstate import RunState
from runner._retry import RetryPolicy
from runner._run.drive import complete
from runner._run.launch import Launcher
from runner._run.resume import checked_decisions
from runner._run.run import Run
from runner._run.tracer import Tracer
from runner._sessions.store import SessionStore
from runner._streaming.channel import Channel
from runner._streaming.hold import Hold, checked_hold
from runner._streaming.trampoline import Outcome, trampoline

if TYPE_CHECKING:  # the extra hookline[otel]; imported at run time only when given
    from opentelemetry.trace import TracerProvider

__all__ = ["Runner"]

Deps = TypeVar("Deps", default=None)
Out = TypeVar("Out", default=str)

_DEFAULT_POLICY: Final = DispatchPolicy()


@final
class Runner(Generic[Deps, Out]):
    """Runs ``agent`` (and its sub-agents) with callbacks at every hook point.

    ``callbacks`` apply to every agent of every run, before each agent's own;
    ``retry`` bounds retries per operation; ``max_steps`` bounds model turns per run;
    ``policy`` is the ``DispatchPolicy`` of every dispatch of every run; ``sessions``
    keeps conversations by ``(user_id, session_id)`` (in memory by default), and a
    run holds its session's lease in that store for ``session_lease`` seconds at a
    time, renewed as it goes (a run on a session another run holds, from any runner
    or process, fails fast with ``SessionBusy``; make the lease outlast the longest
    model or tool call); ``executor`` runs sync models and tools in ``arun`` (a
    thread pool the runner makes when first needed, by default). A thread running a
    sync tool cannot be stopped: a cancelled run's sync tool runs to its end and holds
    its worker, so give a runner that cancels often an executor sized for that.

    ``model_deadline`` (seconds, 600 unless given, a day at most) bounds each model
    attempt, whatever the model: in ``arun`` and ``stream`` a call that passes it ends
    with ``ModelTimeout`` (a transient ``TimeoutError`` the error hooks see). A sync
    ``generate`` cannot be stopped from outside: it reads what is left with
    ``runner.time_left()`` (the real models keep the sooner of it and their own
    ``deadline``); in ``arun`` it runs on a worker thread, which the run stops waiting
    for at the deadline, and the thread runs to its end.

    ``tracer_provider`` (an OpenTelemetry ``TracerProvider``, extra ``hookline[otel]``;
    ``opentelemetry.trace.get_tracer_provider()`` for the global one) traces every run
    after the GenAI semantic conventions: ``invoke_agent``, ``chat`` and
    ``execute_tool`` spans, each hook decision an event. ``capture_content`` puts
    messages, tool arguments and results on them; ``None`` reads
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, unset means off.

    ``run(..., deps=...)`` gives the run's dependencies to the tools that take a
    ``RunContext`` and to hooks (``ctx.invocation.deps``); they are never saved, so a
    resume is given them again (``resume(..., deps=...)``). A run whose agent declares a
    ``deps_type`` class is refused before it starts when ``deps`` is not one. A run's
    ``RunResult.output`` is of the agent's ``output_type`` (``str`` without one).

    A context manager: leaving it closes the runner. ``close()`` refuses new runs at
    once and never waits for runs under way: they finish, and what the runner opened
    (its thread pool, its own session store) is released when the last one ends.
    """

    __slots__ = (
        "_launcher",
        "_root",
        "agent",
        "callbacks",
        "max_steps",
        "model_deadline",
        "policy",
        "retry",
        "rng",
        "session_lease",
        "sessions",
    )

    def __init__(
        self,
        agent: Agent[Deps, Out],
        *,
        callbacks: Callbacks = (),
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 -- frozen, shared safely
        sessions: SessionStore | None = None,
        max_steps: int = 25,
        policy: DispatchPolicy = _DEFAULT_POLICY,
        executor: Executor | None = None,
        rng: random.Random | None = None,
        session_lease: float = 60.0,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool | None = None,
        state_keys: Sequence[bytes] = (),
        model_deadline: float = DEFAULT_MODEL_DEADLINE,
    ) -> None:
        check_type("agent", agent, Agent, "Runner drives an Agent")
        if capture_content is not None:
            check_type("capture_content", capture_content, bool, "True, False or None")
            if tracer_provider is None:
                msg = "capture_content is for traced runs: pass tracer_provider=... too"
                raise ValueError(msg)
        root: Agent[Any, Any] = agent
        launcher = Launcher.checked(
            root,
            kind="Runner",
            callbacks=callbacks,
            retry=retry,
            sessions=sessions,
            max_steps=max_steps,
            policy=policy,
            executor=executor,
            rng=rng,
            session_lease=session_lease,
            tracer=None
            if tracer_provider is None
            else _telemetry(tracer_provider, capture_content, tuple(agent.walk())),
            state_keys=state_keys,
            model_deadline=model_deadline,
        )
        self._launcher: Final = launcher
        self.agent: Final[Agent[Deps, Out]] = agent
        self._root: Final[Agent[Any, Any]] = agent  # what the loop drives, its types erased
        self.callbacks: Final = launcher.callbacks
        self.retry: Final = launcher.retry
        self.max_steps: Final = launcher.max_steps
        self.model_deadline: Final = launcher.model_deadline
        self.policy: Final = launcher.policy
        self.rng: Final = launcher.rng
        self.session_lease: Final = launcher.session_lease
        self.sessions: Final[SessionStore] = launcher.sessions

    @overload
    def run(
        self: Runner[None, Out],
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        deps: None = None,
    ) -> RunResult[Out]: ...
    @overload
    def run(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        deps: Deps,
    ) -> RunResult[Out]: ...
    def run(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        deps: Any = None,
    ) -> RunResult[Any]:
        """Run the agent on ``message`` to its answer; sync models, tools and callbacks only.

        ``session_id=None`` starts a fresh session (its id is in the result); the same
        ``(user_id, session_id)`` continues one. ``callbacks`` apply to this run only,
        after the runner's and before each agent's own. ``deps`` go to the tools that
        take a ``RunContext`` and to hooks, never saved. An unrecovered model error is
        raised with its own type, an answer that does not fit the agent's ``output_type``
        as ``OutputValidationError``; a ``StopRun`` ends the run with ``status="stopped"``.
        Raises ``RuntimeError`` inside a running event loop: use ``arun`` there.
        """
        refuse_inside_loop("run", "arun")
        message = as_message(message)
        check_deps(self.agent, deps, "run")
        launcher = self._launcher
        run = launcher.start(message, user_id, session_id, callbacks, is_async=False)
        run.deps = deps
        try:
            return complete(run.run(self._root, message))
        finally:
            launcher.finish(run)

    @overload
    async def arun(
        self: Runner[None, Out],
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        deps: None = None,
    ) -> RunResult[Out]: ...
    @overload
    async def arun(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        deps: Deps,
    ) -> RunResult[Out]: ...
    async def arun(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        deps: Any = None,
    ) -> RunResult[Any]:
        """``run`` for async code: awaits async models, tools and callbacks, runs sync ones
        on the executor, and runs the tool calls of one model response concurrently."""
        message = as_message(message)
        check_deps(self.agent, deps, "arun")
        launcher = self._launcher
        run = await launcher.astart(message, user_id, session_id, callbacks)
        run.deps = deps
        try:
            return await run.run(self._root, message)
        finally:
            await launcher.afinish(run)

    @overload
    def resume(
        self: Runner[None, Out],
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        deps: None = None,
    ) -> RunResult[Out]: ...
    @overload
    def resume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        deps: Deps,
    ) -> RunResult[Out]: ...
    def resume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        deps: Any = None,
    ) -> RunResult[Any]:
        """Go on with a paused run: ``decisions`` answers each of ``state.pending`` by id.

        The paused calls pass their ``before_tool`` hooks again with the decision in
        ``ctx.decision``: ``Approve()`` runs the call, ``Edit(args)`` runs it with
        ``args``, ``Reject(message)`` gives the model an error result instead. Calls that
        ran before the pause keep their results. ``state`` may come from another process
        (``RunState.from_json``): agents and tools are bound again by name. Raises
        ``InvalidDecisions`` unless the decisions answer exactly the pending requests,
        ``ResumeRefused`` when the state cannot go on (not paused; resumed already or the
        session used since; an agent or tool this runner lacks; a callback the run paused
        under that neither the runner nor ``callbacks`` brings again; a state the store
        does not hold, unless signed with one of ``state_keys``). Nothing runs and
        nothing is saved on a refusal. ``deps`` are given again (a paused state holds
        none); a resumed agent with an ``output_type`` checks its answer as a run does.
        """
        refuse_inside_loop("resume", "aresume")
        check_deps(self.agent, deps, "resume")
        state, every = checked_decisions(self._root, state, decisions)
        run = self._launcher.resumed(state, every, callbacks, is_async=False)
        run.deps = deps
        try:
            return complete(run.resume(self._root, state))
        finally:
            self._launcher.finish(run)

    def paused(self, run_id: str) -> RunState | None:
        """The state of paused run ``run_id`` as the session store keeps it, or ``None``.

        A run that pauses leaves its state in the store (with ``SQLiteSessionStore``, for
        any process on the same file) until a resume ends it.
        """
        check_id("run_id", run_id)
        text = self.sessions.load_paused(run_id)
        return None if text is None else RunState.from_json(text)

    @overload
    async def aresume(
        self: Runner[None, Out],
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        deps: None = None,
    ) -> RunResult[Out]: ...
    @overload
    async def aresume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        deps: Deps,
    ) -> RunResult[Out]: ...
    async def aresume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        deps: Any = None,
    ) -> RunResult[Any]:
        """``resume`` for async code, as ``arun`` is ``run``'s."""
        check_deps(self.agent, deps, "aresume")
        state, every = checked_decisions(self._root, state, decisions)
        run = await self._launcher.aresumed(state, every, callbacks)
        run.deps = deps
        try:
            return await run.resume(self._root, state)
        finally:
            await self._launcher.afinish(run)

    def stream(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Callbacks = (),
        hold: Hold = "auto",
    ) -> AsyncGenerator[StreamEvent, None]:
        """``arun`` as it happens: an async iterator of the run's events, in order.

        ``RunStartedEvent`` first; then every event the run records, as it records it,
        with the model's ``TextDelta`` / ``ToolCallDelta`` pieces as they are generated
        (an ``AttemptDiscardedEvent`` says when streamed text turned out not to be the
        answer); ``RunFinishedEvent`` last, its ``result`` the ``RunResult`` (whose
        ``events`` are the stream's events without the deltas, start and finish). An
        unrecovered error is raised after the events that led to it. The run goes on
        only as the consumer reads (it runs inside the consumer's task, stepped by the
        stream): a slow consumer slows it. A consumer that stops iterating (``break``,
        then ``aclose()``; or cancellation) cancels the run: nothing is saved to the
        session, and ``aclose()`` returns once the run has ended.

        ``hold`` says when a model's pieces go out: ``"output"`` once ``after_model``
        has passed the whole answer (an answer it replaced goes out instead, as one
        ``TextDelta``), ``"none"`` / ``None`` as they are generated, an int ``N`` each
        time ``after_model`` has passed the text so far, checked every ``N``
        characters; ``"auto"`` (the default) holds the pieces of the agents with an
        ``after_model`` hook, as ``"output"``. Anything else raises ``TypeError`` /
        ``ValueError`` when the stream starts. The arguments are checked as the stream
        starts (on the first item asked for), as every error of the run comes.
        """

        async def start(
            channel: Channel,
        ) -> tuple[Run, Callable[[], Coroutine[Any, Any, RunResult]]]:
            text = as_message(message)
            run = await self._launcher.astart(text, user_id, session_id, callbacks, channel=channel)
            return run, lambda: run.run(self._root, text)

        return self._events(start, hold)

    def resume_stream(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Callbacks = (),
        hold: Hold = "auto",
    ) -> AsyncGenerator[StreamEvent, None]:
        """``aresume`` as it happens: the resumed run's events, as ``stream`` yields a run's.

        ``RunStartedEvent`` (the paused run's id and session) first, ``RunFinishedEvent``
        last; between them what the resumed run records and streams: the paused calls
        going on (an approved or edited call runs, a rejected one answers with its error
        result), then the model turns after them. ``hold`` as in ``stream``. A refusal
        (``InvalidDecisions``, ``ResumeRefused``, as ``resume`` refuses) is raised when
        the stream starts, before any event; nothing runs and nothing is saved.
        """

        async def start(
            channel: Channel,
        ) -> tuple[Run, Callable[[], Coroutine[Any, Any, RunResult]]]:
            paused, every = checked_decisions(self._root, state, decisions)
            run = await self._launcher.aresumed(paused, every, callbacks, channel=channel)
            return run, lambda: run.resume(self._root, paused)

        return self._events(start, hold)

    async def _events(
        self,
        start: Callable[
            [Channel], Awaitable[tuple[Run, Callable[[], Coroutine[Any, Any, RunResult]]]]
        ],
        hold: object,
    ) -> AsyncGenerator[StreamEvent, None]:
        """The events of the run ``start`` makes (with the channel it streams into), from
        its start to its finish, the run stepped by the stream."""
        channel = Channel(hold=checked_hold(hold))
        launcher = self._launcher
        run, body = await start(channel)
        outcome: Outcome[RunResult] = Outcome()
        steps = trampoline(body, channel, outcome)
        try:
            yield RunStartedEvent(
                run_id=run.id,
                session_id=run.session_id,
                agent=self.agent.name,
                time=run.settings.engine.now(),
            )
            async for items in steps:
                for item in items:
                    yield item
            assert outcome.value is not None  # the run returned: its result is there
            yield RunFinishedEvent(result=outcome.value, time=run.settings.engine.now())
        finally:
            try:
                await steps.aclose()  # an unfinished run is cancelled and driven to its end
            finally:  # aclose raises when the consumer was cancelled while the run wound down
                await launcher.afinish(run)

    # The 0.2 names of the async twins, kept: the same methods.
    run_async = arun
    resume_async = aresume

    def explain(
        self,
        point: AnyPoint,
        /,
        *,
        tool: str | None = None,
        agent: str | None = None,
        callbacks: Sequence[object] = (),
    ) -> Explanation:
        """The chain ``point`` runs, in order, with each callback's tier and match: for
        ``agent`` (the runner's agent when ``None``) in a run given ``callbacks``, and
        for a call of ``tool`` when given (callbacks matched to other tools left out)::

            print(runner.explain(BEFORE_TOOL, tool="delete_note", callbacks=[audit_log]))

        An MCP server's tool is known once the server listed it (after a run used it).
        """
        return self._launcher.explain(point, tool=tool, agent=agent, callbacks=callbacks)

    def close(self) -> None:
        """Refuse new runs; release the runner's pool and own sessions once no run is under way.

        Never waits for a run. Inside a running event loop it does not wait for the pool's
        threads either; outside one, with no run under way, it waits for them to end.
        """
        self._launcher.close()

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._launcher.closed

    def __enter__(self) -> Runner[Deps, Out]:
        self._launcher.check_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._launcher.closed else "open"
        return f"<Runner {self.agent.name!r} {state}>"


def _telemetry(
    provider: object, capture_content: bool | None, agents: Sequence[Agent[Any, Any]]
) -> Tracer:
    """The runs' spans; OpenTelemetry is imported here, when a provider is given."""
    from runner._telemetry.telemetry import Telemetry

    return Telemetry(provider, capture_content=capture_content, agents=agents)
