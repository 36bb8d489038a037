"""``Launcher``: the one way a run starts and ends, for ``Runner`` and ``DurableRunner`` alike.

A runner makes one launcher and asks it for every run: ``start`` checks the ids,
compiles the run's callbacks (their readiness decided once per list), makes the ids a
fresh run needs, claims the session on this launcher and takes its lease in the store;
``finish`` gives both back (``astart`` and ``afinish`` for an async run: on a store
that blocks, the lease is taken and given back in a thread, ``runner._run.offload``).
What differs between an ordinary and a durable run is plain data handed down: the
engine, the run id, the store the loop sees. ``close`` refuses new runs and releases
what the launcher made (its thread pools, its own in-memory store, its MCP
connections) once the last run under way has ended.
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import threading
from collections.abc import Mapping
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Final, final

from hooks import (
    Callbacks,
    CompiledCallbacks,
    Decision,
    DispatchPolicy,
    Explanation,
    Message,
    compile_callbacks,
    explain,
)
from hooks._points import AnyPoint
from runner._agent import Agent
from runner._checks import check_id, check_type, positive_float, positive_int, store_hint
from runner._mcp.hub import Hub
from runner._models.deadline import DEFAULT_MODEL_DEADLINE, check_deadline
from runner._pause.runstate import RunState
from runner._pause.seal import checked_keys
from runner._retry import RetryPolicy
from runner._run.callbacks import CallbackTable
from runner._run.engine import IN_PROCESS, Engine
from runner._run.offload import STORE_THREADS, OffLoop, blocks
from runner._run.resume import check_callbacks
from runner._run.run import Run
from runner._run.settings import Settings
from runner._run.tracer import Tracer
from runner._sessions.leases import RunLease
from runner._sessions.store import InMemorySessions, SessionStore
from runner._streaming.channel import Channel

__all__ = ["Launcher"]

logger: Final = logging.getLogger("runner")

_NO_CALLBACKS: Final = compile_callbacks(())


@final
class Launcher:
    """Starts and ends the runs of one runner (``kind`` names it in errors: ``"Runner"``)."""

    __slots__ = (
        "_active",
        "_blocks",
        "_closed",
        "_executor",
        "_hub",
        "_lock",
        "_owns_executor",
        "_owns_sessions",
        "_store_pool",
        "_table",
        "agent",
        "callbacks",
        "kind",
        "max_steps",
        "model_deadline",
        "policy",
        "retry",
        "rng",
        "session_lease",
        "sessions",
        "state_keys",
        "tracer",
    )

    def __init__(
        self,
        agent: Agent,
        callbacks: CompiledCallbacks,
        *,
        kind: str,
        retry: RetryPolicy,
        sessions: SessionStore | None,
        max_steps: int,
        policy: DispatchPolicy,
        executor: Executor | None,
        rng: random.Random,
        session_lease: float,
        tracer: Tracer | None,
        state_keys: tuple[bytes, ...] = (),
        model_deadline: float = DEFAULT_MODEL_DEADLINE,
    ) -> None:
        self.agent: Final = agent
        self.state_keys: Final = state_keys  # the first signs paused states, all verify
        self.callbacks: Final = callbacks
        self.kind: Final = kind
        self.retry: Final = retry
        self.max_steps: Final = max_steps
        self.model_deadline: Final = model_deadline
        self.policy: Final = policy
        self.rng: Final = rng
        self.session_lease: Final = session_lease
        self.tracer: Final = tracer
        self._owns_sessions: Final = sessions is None
        self.sessions: Final[SessionStore] = InMemorySessions() if sessions is None else sessions
        agents = tuple(agent.walk())
        self._table: Final = CallbackTable(callbacks, agents)
        # The MCP connections of this runner's agents: made on first use, closed with it.
        self._hub: Final = Hub() if any(each.sources for each in agents) else None
        self._owns_executor: Final = executor is None
        self._executor: Executor | None = executor
        self._blocks: Final = blocks(self.sessions)  # whether its calls may block the loop
        self._store_pool: ThreadPoolExecutor | None = None
        self._closed = False
        # The sessions a run is under way on (a session takes one run at a time); the
        # run count tells close() when the last run has ended.
        self._active: set[tuple[str, str]] = set()
        self._lock: Final = threading.Lock()

    @classmethod
    def checked(
        cls,
        agent: Agent,
        *,
        kind: str,
        callbacks: Callbacks,
        retry: RetryPolicy,
        sessions: SessionStore | None,
        max_steps: int,
        policy: DispatchPolicy,
        executor: Executor | None,
        rng: random.Random | None,
        session_lease: float,
        tracer: Tracer | None = None,
        state_keys: object = (),
        model_deadline: object = DEFAULT_MODEL_DEADLINE,
    ) -> Launcher:
        """A launcher for a runner's arguments, each refused here (untyped callers may pass
        anything), never mid-run."""
        check_type("agent", agent, Agent, f"{kind} drives an Agent")
        check_type("retry", retry, RetryPolicy, "pass a RetryPolicy(...)")
        check_type("policy", policy, DispatchPolicy, "pass a DispatchPolicy(...)")
        if sessions is not None:
            check_type("sessions", sessions, SessionStore, store_hint(sessions))
        if executor is not None:
            check_type("executor", executor, Executor, "e.g. a ThreadPoolExecutor")
        if rng is not None:
            check_type("rng", rng, random.Random, "e.g. random.Random(seed)")
        return cls(
            agent,
            compile_callbacks(callbacks),
            kind=kind,
            retry=retry,
            sessions=sessions,
            max_steps=positive_int("max_steps", max_steps),
            policy=policy,
            executor=executor,
            rng=rng or random.Random(),
            session_lease=positive_float("session_lease", session_lease),
            tracer=tracer,
            state_keys=checked_keys(state_keys),
            model_deadline=check_deadline(f"{kind}'s model_deadline", model_deadline),
        )

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._closed

    def start(
        self,
        message: Message,
        user_id: str,
        session_id: str | None,
        callbacks: Callbacks,
        *,
        is_async: bool,
        channel: Channel | None = None,
        run_id: str | None = None,
        engine: Engine = IN_PROCESS,
        sessions: SessionStore | None = None,
    ) -> Run:
        """A run of ``message``, claimed on its session and its lease.

        A resume gives its run id; a durable runner its engine, its run id and the store
        its loop sees (what the loop loads and saves goes through the engine's steps).
        """
        run = self._claimed(
            message,
            user_id,
            session_id,
            callbacks,
            is_async=is_async,
            channel=channel,
            run_id=run_id,
            engine=engine,
            sessions=sessions,
        )
        lease = run.lease
        if lease is not None:
            try:  # the store's lease: no other runner or process may run the session meanwhile
                lease.acquire()
            except BaseException:
                self.finish(run, held=False)
                raise
        return run

    async def astart(
        self,
        message: Message,
        user_id: str,
        session_id: str | None,
        callbacks: Callbacks,
        *,
        channel: Channel | None = None,
        run_id: str | None = None,
        engine: Engine = IN_PROCESS,
        sessions: SessionStore | None = None,
        paused: str | None = None,
    ) -> Run:
        """``start`` for an async run. On a store that blocks, the lease is taken in a
        thread, and the session read there too (with the paused state of run ``paused``,
        for a resume): one trip off the loop."""
        run = self._claimed(
            message,
            user_id,
            session_id,
            callbacks,
            is_async=True,
            channel=channel,
            run_id=run_id,
            engine=engine,
            sessions=sessions,
        )
        lease, offload = run.lease, run.offload
        if offload is not None or lease is not None:
            try:
                if offload is not None:
                    await offload.call(run.open, paused)
                elif lease is not None:
                    lease.acquire()
            except asyncio.CancelledError:
                # The lease may have been taken in its thread before the run was cancelled.
                await self.afinish(run)
                raise
            except BaseException:
                self.finish(run, held=False)
                raise
        return run

    def _claimed(
        self,
        message: Message,
        user_id: str,
        session_id: str | None,
        callbacks: Callbacks,
        *,
        is_async: bool,
        channel: Channel | None,
        run_id: str | None,
        engine: Engine = IN_PROCESS,
        sessions: SessionStore | None = None,
    ) -> Run:
        """A run of ``message``, claimed on its session on this launcher; no lease taken."""
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
        # A resume in this process (its run id given) takes the lease under an owner of its
        # own: two resumes of one paused run (two servers deciding it at once) must not
        # renew one lease as one owner, or both would run the paused calls. A durable run
        # keeps its run id as owner: its recovered workflow takes its own lease back.
        resuming = run_id is not None and engine is IN_PROCESS
        if run_id is None and fresh and engine is IN_PROCESS:
            run_id, session_id = _two_ids()
        else:
            run_id = engine.new_id() if run_id is None else run_id
            session_id = engine.new_id() if session_id is None else session_id
        # A fresh session's id is 128 random bits nobody knows until the run shows it: to
        # its callbacks, its stream, its spans, its result. A run with none of the first
        # three, on the launcher's in-memory store, is one no other run can name, so it
        # takes no lease; every other run holds its session's lease in the store.
        private = (
            fresh
            and setups.silent
            and channel is None
            and self.tracer is None
            and engine is IN_PROCESS
            and sessions is None
            and type(self.sessions) is InMemorySessions
        )
        lease = (
            None
            if private
            else RunLease(
                self.sessions,
                user_id,
                session_id,
                owner=f"{run_id}/resume-{os.urandom(6).hex()}" if resuming else run_id,
                ttl=self.session_lease,
            )
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
                model_deadline=self.model_deadline,
                channel=channel,
                tracer=self.tracer,
                hub=self._hub,
                pending=self._table.pending_for(run_callbacks),
            ),
            sessions=self.sessions if sessions is None else sessions,
            lease=lease,
            callbacks=(self.callbacks, run_callbacks),
            state_keys=self.state_keys,
            # The runner's store decides (a durable run's loop sees a stand-in for it).
            offload=OffLoop(self._store_threads) if is_async and self._blocks else None,
        )
        key = (run.user_id, run.session_id)
        with self._lock:
            self.check_open()
            if key in self._active:
                msg = (
                    f"session {run.session_id!r} of user {run.user_id!r} already has a run "
                    "under way on this runner; a session takes one run at a time"
                )
                raise RuntimeError(msg)
            self._active.add(key)
        return run

    def resumed(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        callbacks: Callbacks,
        *,
        is_async: bool,
        engine: Engine = IN_PROCESS,
        sessions: SessionStore | None = None,
    ) -> Run:
        """The run of paused ``state`` (its decisions checked already), started again;
        ``ResumeRefused`` when the runner's and ``callbacks`` lack one the run paused under."""
        frame = state.frame
        assert frame is not None  # checked_decisions refused any other state
        self.check_callbacks(state, callbacks)
        run = self.start(
            frame.message,
            state.user_id,
            state.session_id,
            callbacks,
            is_async=is_async,
            run_id=state.run_id,
            engine=engine,
            sessions=sessions,
        )
        run.decisions = decisions
        return run

    async def aresumed(
        self,
        state: RunState,
        decisions: Mapping[str, Decision],
        callbacks: Callbacks,
        *,
        channel: Channel | None = None,
        engine: Engine = IN_PROCESS,
        sessions: SessionStore | None = None,
    ) -> Run:
        """``resumed`` for an async run, as ``astart`` is ``start``'s; a streamed resume
        gives the ``channel`` its events go through."""
        frame = state.frame
        assert frame is not None  # checked_decisions refused any other state
        self.check_callbacks(state, callbacks)
        run = await self.astart(
            frame.message,
            state.user_id,
            state.session_id,
            callbacks,
            channel=channel,
            run_id=state.run_id,
            engine=engine,
            sessions=sessions,
            paused=state.run_id,
        )
        run.decisions = decisions
        return run

    def explain(
        self, point: AnyPoint, *, tool: str | None, agent: str | None, callbacks: Callbacks
    ) -> Explanation:
        """The chain ``point`` runs for ``agent`` (the root agent when ``None``) in a run
        given ``callbacks``; for the call of ``tool`` when given."""
        agents = {each.name: each for each in self.agent.walk()}
        chosen = self.agent if agent is None else agents.get(agent)
        if chosen is None:
            msg = f"{self.kind} has no agent {agent!r}; its agents: {', '.join(agents)}"
            raise ValueError(msg)
        compiled = self._table.agent_list(compile_callbacks(callbacks), chosen)
        info = None
        if tool is not None:
            info = chosen.infos.get(tool)
            hub = self._hub
            for source in chosen.sources if info is None and hub is not None else ():
                listing = hub.current(source) or ()  # type: ignore[union-attr]
                info = next((each.info for each in listing if each.info.name == tool), info)
            if info is None:
                msg = (
                    f"agent {chosen.name!r} has no tool {tool!r} (an MCP server's tools are "
                    f"known once listed); its tools: {', '.join(chosen.infos) or 'none'}"
                )
                raise ValueError(msg)
        return explain(compiled, point, tool=info)

    def check_callbacks(self, state: RunState, callbacks: Callbacks = ()) -> None:
        """Refuse (``ResumeRefused``) resuming ``state`` without a callback it paused under:
        the runner's callbacks and ``callbacks`` must hold each one it records."""
        check_callbacks(state, (*self.callbacks.callbacks, *compile_callbacks(callbacks).callbacks))

    def finish(self, run: Run, *, held: bool = True) -> None:
        """The run has ended: its lease given back (if ``held``), its session free again."""
        if held:
            run.let_go()
        self._free(run)

    async def afinish(self, run: Run) -> None:
        """``finish`` for an async run: the lease of a store that blocks given back in a
        thread (a cancellation meanwhile waits for it: the session is freed after)."""
        try:
            if run.lease is not None and not run.released:  # else given back with the save
                if run.offload is None:
                    run.let_go()
                else:
                    await run.offload.call(run.let_go)
        finally:
            self._free(run)

    def _free(self, run: Run) -> None:
        """The run's session free again on this launcher; the last run of a closed one
        releases what it made."""
        with self._lock:
            self._active.discard((run.user_id, run.session_id))
            last = self._closed and not self._active
        if last:
            self._release()

    def close(self) -> None:
        """Refuse new runs; release the pool and own store once no run is under way."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            idle = not self._active
        self._table.clear()
        if idle:
            self._release()

    def check_open(self) -> None:
        """Raise ``RuntimeError`` once closed."""
        if self._closed:
            msg = f"<{self.kind} {self.agent.name!r} closed> is closed; make a new {self.kind}"
            raise RuntimeError(msg)

    def _release(self) -> None:
        """Shut the pool the launcher made, close its MCP connections (stdio servers
        stopped) and forget the sessions it made."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            on_loop = False
        else:
            on_loop = True
        if self._hub is not None:
            if on_loop:  # never block an event loop: stdio servers take a while to stop
                # Not a daemon: the interpreter waits for it at exit, so no server is orphaned.
                threading.Thread(target=self._hub.close, name="hookline-mcp-close").start()
            else:
                self._hub.close()
        if self._owns_executor and self._executor is not None:
            self._executor.shutdown(wait=not on_loop)  # never block an event loop
        with self._lock:
            store_pool, self._store_pool = self._store_pool, None
        if store_pool is not None:  # idle: the last run's calls have ended
            store_pool.shutdown(wait=False)
        if self._owns_sessions and isinstance(self.sessions, InMemorySessions):
            self.sessions.clear()

    def _pool(self) -> Executor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(thread_name_prefix="hookline-tool")
            return self._executor

    def _store_threads(self) -> Executor:
        """The threads an async run's calls into a store that blocks are made in."""
        with self._lock:
            if self._store_pool is None:
                self._store_pool = ThreadPoolExecutor(
                    max_workers=STORE_THREADS, thread_name_prefix="hookline-store"
                )
            return self._store_pool


def _two_ids() -> tuple[str, str]:
    """A run id and a session id as the in-process engine makes them (128 random bits each,
    in hex), from one draw of the system's randomness."""
    drawn = os.urandom(32).hex()
    return drawn[:32], drawn[32:]
