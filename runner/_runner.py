"""``Runner``: drives an agent through one run, sync or async, threading every callback."""

from __future__ import annotations

import asyncio
import random
import secrets
import threading
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Final, final

from hooks import (
    CompiledCallbacks,
    Message,
    compile_callbacks,
)
from runner._agent import Agent
from runner._events import RunResult
from runner._loop import POINTS, Run, complete
from runner._retry import RetryPolicy
from runner._sessions import InMemorySessions, SessionStore

__all__ = ["Runner"]

_COMBINED_SIZE: Final = 64
# The points a run dispatches, so the only ones a sync run must be able to call.
_RUNNER_POINTS: Final = (*((point.name, point.kind) for point in POINTS), ("on_event", "event"))


@final
class Runner:
    """Runs ``agent`` (and its sub-agents) with callbacks at every hook point.

    ``callbacks`` apply to every agent of every run, before each agent's own;
    ``retry`` bounds retries per operation; ``max_steps`` bounds model turns per run;
    ``sessions`` keeps conversations by ``(user_id, session_id)`` (in memory by
    default). A context manager: leaving it closes what the runner opened (its thread
    pool, its own session store); a closed runner refuses to run.
    """

    __slots__ = (
        "_active",
        "_active_lock",
        "_agent_callbacks",
        "_closed",
        "_combined",
        "_executor",
        "_owns_sessions",
        "agent",
        "callbacks",
        "max_steps",
        "retry",
        "rng",
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
        rng: random.Random | None = None,
    ) -> None:
        checked: object = agent  # untyped callers may pass anything
        if not isinstance(checked, Agent):
            msg = f"Runner drives an Agent, got {type(agent).__name__}"
            raise TypeError(msg)
        if max_steps < 1:
            msg = f"max_steps must be >= 1, got {max_steps!r}"
            raise ValueError(msg)
        self.agent: Final = agent
        self.callbacks: Final = compile_callbacks(tuple(callbacks))
        self.retry: Final = retry
        self.max_steps: Final = max_steps
        self._owns_sessions: Final = sessions is None
        self.sessions: Final[SessionStore] = InMemorySessions() if sessions is None else sessions
        self.rng: Final = rng or random.Random()
        # Each agent's own callbacks, validated once here rather than on every run.
        self._agent_callbacks: Final = {
            id(each): compile_callbacks(each.callbacks) for each in agent.walk()
        }
        # id(run callbacks) -> (them, per agent id the full list).
        self._combined: dict[int, tuple[CompiledCallbacks, dict[int, CompiledCallbacks]]] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        # The sessions a run is under way on: a session is one conversation, so two
        # runs on it at once would each save a history without the other's turn.
        self._active: set[tuple[str, str]] = set()
        self._active_lock: Final = threading.Lock()

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
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            msg = (
                "Runner.run() was called inside a running event loop; use await runner.run_async()"
            )
            raise RuntimeError(msg)
        run = self._start(user_id, session_id, callbacks, is_async=False)
        self._claim(run)
        try:
            return complete(run.run(self.agent, _message(message)))
        finally:
            self._release(run)

    async def run_async(
        self,
        message: str | Message,
        *,
        user_id: str = "user",
        session_id: str | None = None,
        callbacks: Sequence[object] = (),
    ) -> RunResult:
        """``run`` for async code: awaits async models, tools and callbacks, and runs the
        tool calls of one model response concurrently."""
        run = self._start(user_id, session_id, callbacks, is_async=True)
        self._claim(run)
        try:
            return await run.run(self.agent, _message(message))
        finally:
            self._release(run)

    def close(self) -> None:
        """Shut the runner's thread pool, forget its own sessions; later runs raise."""
        if self._closed:
            return
        self._closed = True
        self._combined.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        if self._owns_sessions and isinstance(self.sessions, InMemorySessions):
            self.sessions.clear()

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
        self, user_id: str, session_id: str | None, callbacks: Sequence[object], *, is_async: bool
    ) -> Run:
        self._check_open()
        table = self._callbacks_for(compile_callbacks(callbacks), check_sync=not is_async)
        return Run(
            run_id=secrets.token_hex(16),
            user_id=user_id,
            session_id=secrets.token_hex(16) if session_id is None else session_id,
            compile=lambda agent: table[id(agent)],
            retry=self.retry,
            max_steps=self.max_steps,
            sessions=self.sessions,
            is_async=is_async,
            executor=self._pool,
            rng=self.rng,
        )

    def _callbacks_for(
        self, run_callbacks: CompiledCallbacks, *, check_sync: bool
    ) -> dict[int, CompiledCallbacks]:
        """Per agent id: the runner's, the run's, then the agent's own callbacks.

        Made once per run-callbacks list (``compile_callbacks`` returns the same object
        for the same list), so a run with the same callbacks as the last one builds nothing.
        """
        entry = self._combined.get(id(run_callbacks))
        if entry is None or entry[0] is not run_callbacks:
            base = self.callbacks + run_callbacks
            table = {key: base + own for key, own in self._agent_callbacks.items()}
            entry = (run_callbacks, table)
            if len(self._combined) >= _COMBINED_SIZE:
                self._combined.clear()
            self._combined[id(run_callbacks)] = entry
        if check_sync:  # a few dict lookups per agent; nothing is cached that could go stale
            for agent in self.agent.walk():
                _check_sync(agent, entry[1][id(agent)])
        return entry[1]

    def _claim(self, run: Run) -> None:
        key = (run.user_id, run.session_id)
        with self._active_lock:
            if key in self._active:
                msg = (
                    f"session {run.session_id!r} of user {run.user_id!r} already has a run "
                    "under way on this runner; a session takes one run at a time"
                )
                raise RuntimeError(msg)
            self._active.add(key)

    def _release(self, run: Run) -> None:
        with self._active_lock:
            self._active.discard((run.user_id, run.session_id))

    def _pool(self) -> Executor:
        self._check_open()  # a closed runner makes no new thread pool it would never shut
        if self._executor is None:
            self._executor = ThreadPoolExecutor(thread_name_prefix="hookline-tool")
        return self._executor

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self!r} is closed; make a new Runner"
            raise RuntimeError(msg)


def _message(message: str | Message) -> Message:
    if isinstance(message, Message):
        return message
    if isinstance(message, str):
        return Message("user", message)
    msg = f"a run takes a str or a Message, got {type(message).__name__}"  # type: ignore[unreachable]
    raise TypeError(msg)


def _check_sync(agent: Agent, callbacks: CompiledCallbacks) -> None:
    """Refuse, before anything runs, what a sync run could not await."""
    if agent.model_is_async:
        msg = f"agent {agent.name!r} has an async model; use Runner.run_async"
        raise TypeError(msg)
    async_tools = [name for name, is_async in agent.tool_is_async.items() if is_async]
    if async_tools:
        msg = f"agent {agent.name!r} has async tools {async_tools}; use Runner.run_async"
        raise TypeError(msg)
    for name, kind in _RUNNER_POINTS:
        callbacks.sync_chain(name, kind)
