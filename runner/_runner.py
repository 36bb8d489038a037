"""``Runner``: drives an agent through one run, sync or async, threading every callback."""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
import time
from collections.abc import AsyncGenerator, Mapping, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Final, final

from hooks import (
    Decision,
    DispatchPolicy,
    Message,
    compile_callbacks,
)
from runner._agent import Agent
from runner._checks import (
    as_message,
    check_id,
    check_type,
    positive_float,
    positive_int,
    refuse_inside_loop,
    store_hint,
)
from runner._events import RunFinishedEvent, RunResult, RunStartedEvent, StreamEvent
from runner._pause.runstate import RunState
from runner._retry import RetryPolicy
from runner._run.callbacks import CallbackTable
from runner._run.drive import complete
from runner._run.engine import IN_PROCESS, Engine
from runner._run.resume import checked_decisions
from runner._run.run import Run
from runner._run.settings import Settings
from runner._sessions.leases import RunLease
from runner._sessions.store import InMemorySessions, SessionStore
from runner._streaming.channel import Channel
from runner._streaming.trampoline import Outcome, trampoline

if TYPE_CHECKING:  # the extra hookline[otel]; imported at run time only when given
    from opentelemetry.trace import TracerProvider

    from runner._telemetry.telemetry import Telemetry

__all__ = ["Runner"]

logger: Final = logging.getLogger("runner")

_DEFAULT_POLICY: Final = DispatchPolicy()
_NO_CALLBACKS: Final = compile_callbacks(())


@final
class Runner:
    """Runs ``agent`` (and its sub-agents) with callbacks at every hook point.

    ``callbacks`` apply to every agent of every run, before each agent's own;
    ``retry`` bounds retries per operation; ``max_steps`` bounds model turns per run;
    ``policy`` is the ``DispatchPolicy`` of every dispatch of every run; ``sessions``
    keeps conversations by ``(user_id, session_id)`` (in memory by default), and a
    run holds its session's lease in that store for ``session_lease`` seconds at a
    time, renewed as it goes (a run on a session another run holds, from any runner
    or process, fails fast with ``SessionBusy``; make the lease outlast the longest
    model or tool call); ``executor`` runs sync models and tools in ``run_async`` (a
    thread pool the runner makes when first needed, by default). A thread running a
    sync tool cannot be stopped: a cancelled run's sync tool runs to its end and holds
    its worker, so give a runner that cancels often an executor sized for that.

    ``tracer_provider`` (an OpenTelemetry ``TracerProvider``, extra ``hookline[otel]``;
    ``opentelemetry.trace.get_tracer_provider()`` for the global one) traces every run
    after the GenAI semantic conventions: ``invoke_agent``, ``chat`` and
    ``execute_tool`` spans, each hook decision an event. ``capture_content`` puts
    messages, tool arguments and results on them; ``None`` reads
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, unset means off.

    A context manager: leaving it closes the runner. ``close()`` refuses new runs at
    once and never waits for runs under way: they finish, and what the runner opened
    (its thread pool, its own session store) is released when the last one ends.
    """

    __slots__ = (
        "_active",
        "_closed",
        "_executor",
        "_lock",
        "_owns_executor",
        "_owns_sessions",
        "_table",
        "_telemetry",
        "agent",
        "callbacks",
        "max_steps",
        "policy",
        "retry",
        "rng",
        "session_lease",
        "sessions",
    )

    def __init__(
        self,
        agent: Agent,
        *,
        callbacks: Sequence[object] = (),
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 -- frozen, shared safely
        sessions: SessionStore | None = None,
        max_steps: int = 25,
        policy: DispatchPolicy = _DEFAULT_POLICY,
        executor: Executor | None = None,
        rng: random.Random | None = None,
        session_lease: float = 60.0,
        tracer_provider: TracerProvider | None = None,
        capture_content: bool | None = None,
    ) -> None:
        # Untyped callers may pass anything: each argument is refused here, not mid-run.
        check_type("agent", agent, Agent, "Runner drives an Agent")
        check_type("retry", retry, RetryPolicy, "pass a RetryPolicy(...)")
        check_type("policy", policy, DispatchPolicy, "pass a DispatchPolicy(...)")
        if sessions is not None:
            check_type("sessions", sessions, SessionStore, store_hint(sessions))
        if executor is not None:
            check_type("executor", executor, Executor, "e.g. a ThreadPoolExecutor")
        if rng is not None:
            check_type("rng", rng, random.Random, "e.g. random.Random(seed)")
        if capture_content is not None:
            check_type("capture_content", capture_content, bool, "True, False or None")
            if tracer_provider is None:
                msg = "capture_content is for traced runs: pass tracer_provider=... too"
                raise ValueError(msg)
        self.agent: Final = agent
        self.callbacks: Final = compile_callbacks(callbacks)
        self.retry: Final = retry
        self.max_steps: Final = positive_int("max_steps", max_steps)
        self.policy: Final = policy
        self._owns_sessions: Final = sessions is None
        self.sessions: Final[SessionStore] = InMemorySessions() if sessions is None else sessions
        self.rng: Final = rng or random.Random()
        self.session_lease: Final = positive_float("session_lease", session_lease)
        agents = tuple(agent.walk())
        self._table: Final = CallbackTable(self.callbacks, agents)
        self._owns_executor: Final = executor is None
        self._executor: Executor | None = executor
        self._closed = False
        # The sessions a run is under way on (a session takes one run at a time); the
        # run count tells close() when the last run has ended.
        self._active: set[tuple[str, str]] = set()
        self._lock: Final = threading.Lock()
        self._telemetry: Final = (
            None
            if tracer_provider is None
            else _telemetry(tracer_provider, capture_content, agents)
        )

    def run(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Sequence[object] = (),
    ) -> RunResult:
        """Run the agent on ``message`` to its answer; sync models, tools and callbacks only.

        ``session_id=None`` starts a fresh session (its id is in the result); the same
        ``(user_id, session_id)`` continues one. ``callbacks`` apply to this run only,
        after the runner's and before each agent's own. An unrecovered model error is
        raised with its own type; a ``StopRun`` ends the run with ``status="stopped"``.
        Raises ``RuntimeError`` inside a running event loop: use ``run_async`` there.
        """
        refuse_inside_loop("run", "run_async")
        message = as_message(message)
        run = self._start(message, user_id, session_id, callbacks, is_async=False)
        try:
            return complete(run.run(self.agent, message))
        finally:
            self._finish(run)

    async def run_async(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Sequence[object] = (),
    ) -> RunResult:
        """``run`` for async code: awaits async models, tools and callbacks, runs sync ones
        on the executor, and runs the tool calls of one model response concurrently."""
        message = as_message(message)
        run = self._start(message, user_id, session_id, callbacks, is_async=True)
        try:
            return await run.run(self.agent, message)
        finally:
            self._finish(run)

    def resume(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Sequence[object] = (),
    ) -> RunResult:
        """Go on with a paused run: ``decisions`` answers each of ``state.pending`` by id.

        The paused calls pass their ``before_tool`` hooks again with the decision in
        ``ctx.decision``: ``Approve()`` runs the call, ``Edit(args)`` runs it with
        ``args``, ``Reject(message)`` gives the model an error result instead. Calls that
        ran before the pause keep their results. ``state`` may come from another process
        (``RunState.from_json``): agents and tools are bound again by name. Raises
        ``InvalidDecisions`` unless the decisions answer exactly the pending requests,
        ``ResumeRefused`` when the state cannot go on (not paused; resumed already or the
        session used since; an agent or tool this runner lacks).
        """
        refuse_inside_loop("resume", "resume_async")
        state, every = checked_decisions(self.agent, state, decisions)
        run = self._resumed(state, every, callbacks, is_async=False)
        try:
            return complete(run.resume(self.agent, state))
        finally:
            self._finish(run)

    def paused(self, run_id: str) -> RunState | None:
        """The state of paused run ``run_id`` as the session store keeps it, or ``None``.

        A run that pauses leaves its state in the store (with ``SQLiteSessionStore``, for
        any process on the same file) until a resume ends it.
        """
        check_id("run_id", run_id)
        text = self.sessions.load_paused(run_id)
        return None if text is None else RunState.from_json(text)

    async def resume_async(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        *,
        callbacks: Sequence[object] = (),
    ) -> RunResult:
        """``resume`` for async code, as ``run_async`` is ``run``'s."""
        state, every = checked_decisions(self.agent, state, decisions)
        run = self._resumed(state, every, callbacks, is_async=True)
        try:
            return await run.resume(self.agent, state)
        finally:
            self._finish(run)

    async def stream(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Sequence[object] = (),
    ) -> AsyncGenerator[StreamEvent, None]:
        """``run_async`` as it happens: an async iterator of the run's events, in order.

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
        """
        channel = Channel()
        run = self._start(message, user_id, session_id, callbacks, is_async=True, channel=channel)
        outcome: Outcome[RunResult] = Outcome()
        steps = trampoline(lambda: run.run(self.agent, as_message(message)), channel, outcome)
        try:
            yield RunStartedEvent(
                run_id=run.id, session_id=run.session_id, agent=self.agent.name, time=time.time()
            )
            async for items in steps:
                for item in items:
                    yield item
            assert outcome.value is not None  # the run returned: its result is there
            yield RunFinishedEvent(result=outcome.value, time=time.time())
        finally:
            try:
                await steps.aclose()  # an unfinished run is cancelled and driven to its end
            finally:  # aclose raises when the consumer was cancelled while the run wound down
                self._finish(run)

    def close(self) -> None:
        """Refuse new runs; release the runner's pool and own sessions once no run is under way.

        Never waits for a run. Inside a running event loop it does not wait for the pool's
        threads either; outside one, with no run under way, it waits for them to end.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle = not self._active
        self._table.clear()
        if idle:
            self._release()

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._closed

    def __enter__(self) -> Runner:
        self._check_open()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<Runner {self.agent.name!r} {state}>"

    def _start(
        self,
        message: str | Message,
        user_id: str,
        session_id: str | None,
        callbacks: Sequence[object],
        *,
        is_async: bool,
        channel: Channel | None = None,
        run_id: str | None = None,
        engine: Engine = IN_PROCESS,
        sessions: SessionStore | None = None,
    ) -> Run:
        """A run, claimed on its session and its lease; ``resume`` gives the run id, a durable
        runner the engine, the id and the store the loop sees."""
        as_message(message)  # refused before anything is claimed
        check_id("user_id", user_id)
        fresh = session_id is None
        if not fresh:
            check_id("session_id", session_id)
        run_callbacks = (
            _NO_CALLBACKS
            if not callbacks and type(callbacks) is tuple
            else compile_callbacks(callbacks)
        )
        setups = self._table.for_run(run_callbacks, check_sync=not is_async)
        if run_id is None and fresh and engine is IN_PROCESS:
            run_id, session_id = _two_ids()
        else:
            run_id = engine.new_id() if run_id is None else run_id
            session_id = engine.new_id() if session_id is None else session_id
        # A fresh session's id is 128 random bits nobody knows until the run shows it: to
        # its callbacks, its stream, its spans, its result. A run with none of the first
        # three, on the runner's own in-memory store, is one no other run can name, so it
        # takes no lease; every other run holds its session's lease in the store.
        private = (
            fresh
            and setups.silent
            and channel is None
            and self._telemetry is None
            and engine is IN_PROCESS
            and sessions is None
            and type(self.sessions) is InMemorySessions
        )
        lease = (
            None
            if private
            else RunLease(self.sessions, user_id, session_id, owner=run_id, ttl=self.session_lease)
        )
        run = Run(
            run_id=run_id,
            user_id=user_id,
            session_id=session_id,
            setups=setups.by_agent,
            settings=Settings(
                retry=self.retry,
                max_steps=self.max_steps,
                policy=self.policy,
                is_async=is_async,
                pool=self._pool,
                rng=self.rng,
                engine=engine,
                channel=channel,
                tracer=self._telemetry,
            ),
            sessions=self.sessions if sessions is None else sessions,
            lease=lease,
        )
        key = (run.user_id, run.session_id)
        with self._lock:
            self._check_open()
            if key in self._active:
                msg = (
                    f"session {run.session_id!r} of user {run.user_id!r} already has a run "
                    "under way on this runner; a session takes one run at a time"
                )
                raise RuntimeError(msg)
            self._active.add(key)
        if lease is not None:
            try:  # the store's lease: no other runner or process may run the session meanwhile
                lease.acquire()
            except BaseException:
                self._finish(run, held=False)
                raise
        return run

    def _resumed(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        callbacks: Sequence[object],
        *,
        is_async: bool,
    ) -> Run:
        frame = state.frame
        assert frame is not None  # checked_decisions refused any other state
        run = self._start(
            frame.message,
            state.user_id,
            state.session_id,
            callbacks,
            is_async=is_async,
            run_id=state.run_id,
        )
        run.decisions = decisions
        return run

    def _finish(self, run: Run, *, held: bool = True) -> None:
        lease = run.lease
        if held and lease is not None:
            try:
                lease.release()
            except Exception:  # the lease expires by itself: the run's own outcome stands
                logger.exception(
                    "could not release the lease of run %s on session %r; it expires in %gs",
                    run.id,
                    run.session_id,
                    lease.ttl,
                )
        with self._lock:
            self._active.discard((run.user_id, run.session_id))
            last = self._closed and not self._active
        if last:
            self._release()

    def _release(self) -> None:
        """Shut the pool the runner made and forget the sessions it made."""
        if self._owns_executor and self._executor is not None:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                self._executor.shutdown(wait=True)
            else:  # never block an event loop
                self._executor.shutdown(wait=False)
        if self._owns_sessions and isinstance(self.sessions, InMemorySessions):
            self.sessions.clear()

    def _pool(self) -> Executor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(thread_name_prefix="hookline-tool")
            return self._executor

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self!r} is closed; make a new Runner"
            raise RuntimeError(msg)


def _two_ids() -> tuple[str, str]:
    """A run id and a session id as the in-process engine makes them (128 random bits each,
    in hex), from one draw of the system's randomness."""
    drawn = os.urandom(32).hex()
    return drawn[:32], drawn[32:]


def _telemetry(
    provider: object, capture_content: bool | None, agents: Sequence[Agent]
) -> Telemetry:
    """The runs' spans; OpenTelemetry is imported here, when a provider is given."""
    from runner._telemetry.telemetry import Telemetry

    return Telemetry(provider, capture_content=capture_content, agents=agents)
