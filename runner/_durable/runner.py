"""``DurableRunner``: agent runs that survive a crash, as DBOS workflows (extra ``hookline[dbos]``).

Importing ``runner`` never imports DBOS; making a ``DurableRunner`` does, and without
the extra says which ``pip install`` it needs.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from hooks import Callbacks, Decision, DispatchPolicy, Message
from runner._agent import Agent
from runner._checks import as_message, check_id, check_type, refuse_inside_loop
from runner._events import RunResult
from runner._models.deadline import DEFAULT_MODEL_DEADLINE
from runner._pause.runstate import RunState, encode_decision
from runner._retry import RetryPolicy
from runner._run.launch import Launcher
from runner._run.resume import checked_decisions
from runner._sessions.store import SessionStore
from runner._streaming.hold import Hold

if TYPE_CHECKING:
    from dbos import Serializer

    from runner._durable.workflows import Workflows

__all__ = ["DurableRunner"]

_INSTALL: Final = "pip install 'hookline[dbos]'"
_DEFAULT_POLICY: Final = DispatchPolicy()
_names: set[str] = set()  # of the durable runners made in this process
_names_lock: Final = threading.Lock()


def _require_dbos() -> None:
    try:
        import dbos  # noqa: F401  # pyright: ignore[reportUnusedImport]  # is the extra here?
    except ImportError as exc:
        msg = f"DurableRunner needs DBOS, an optional extra: {_INSTALL}"
        raise ImportError(msg, name="dbos") from exc


@final
class DurableRunner:
    """Runs ``agent`` as DBOS workflows: a run survives a crash and resumes where it stopped.

    Each run is a workflow keyed by its ``run_id``; each model call, tool call, retry
    wait and session load and save is a step whose result DBOS records, in SQLite
    (one machine) or Postgres (many workers). When a process dies mid-run,
    ``DBOS.launch()`` in the next one recovers the run: the steps that ended are read
    off the record and the run goes on from the step that was under way. The
    arguments are ``Runner``'s; ``name`` (the agent's name by default) names the
    runner's workflows, so it must be unique in the process and stable across deploys.

    Make it before ``DBOS.launch()`` in every process that runs or recovers its runs:
    DBOS finds a run's code by that name. DBOS recovers a run only on the application
    version it started on, which it derives from the workflows' code (hookline's, the
    same whatever the agent does): when a deploy changes what runs would do, set
    ``application_version`` in ``DBOSConfig``. What a durable run asks of its parts:

    - **Hooks run in the workflow**, again on recovery: they must decide the same
      way given the same inputs (no clock, randomness or I/O of their own). An
      effectful hook does its effect in a function decorated ``@DBOS.step()``, which
      runs once and is replayed from the record. Observers are told replayed
      dispatches again.
    - **Tools run at least once**: the step under way when the process died runs
      again. A tool with an outside effect passes ``idempotency_key()`` to it.
    - **Errors are stored** (``runner._durable.codec``): error hooks see the stored
      copy, the same on the first run and on recovery, so retries and fallbacks are
      decided alike; the model SDK's own retries stay off. An error whose class is
      not on the codec's allow-list (builtins', the project's, DBOS's, the provider
      SDKs', and the classes of ``errors``) comes back as a ``RecoveredError``
      keeping its type's name, message, JSON attributes and transience.
    - **Records are JSON**: every step's value and error and every result is stored
      as the codec's JSON, and DBOS must be launched with ``DurableRunner.serializer()``
      (``DBOS(config={..., "serializer": DurableRunner.serializer()})``) so its own
      records are too: nothing is unpickled. A value with no JSON form (in a run's
      state, say) is a ``TypeError`` naming it. ``allow_pickle=True`` stores with
      pickle instead and accepts DBOS's pickle serializer: whoever can write to the
      database can then run code in every process that reads a record.
    - **Each process has its own executor id** (``"executor_id"`` in DBOS's config),
      stable across its restarts: a run refuses to start under DBOS's default
      ``"local"``, which a second process would share and take runs over with.
    - A run's callbacks are the runner's (none per run: recovery could not have
      them); its tool calls run one by one, in the model's order. ``session_id=None``
      starts a session with an id made from the run id; use a persistent ``sessions``
      store to keep conversations.
    - A hook's ``Pause`` ends the run's workflow ``"paused"``, its state saved to the
      store in a step; ``resume`` goes on as a workflow of its own, keyed by the state
      and the decisions (``_durable_body`` says why the run does not wait in its own).
      The state records the runner's callbacks: a runner without one of them refuses
      the resume (``ResumeRefused``), and a state the store does not hold resumes only
      signed with one of ``state_keys``, as with ``Runner``.
    - Each model attempt has ``model_deadline`` seconds, as with ``Runner``.
    """

    __slots__ = (
        "_launcher",
        "_workflows",
        "agent",
        "allow_pickle",
        "name",
        "session_lease",
        "sessions",
    )

    def __init__(
        self,
        agent: Agent,
        *,
        name: str | None = None,
        callbacks: Callbacks = (),
        retry: RetryPolicy = RetryPolicy(),  # noqa: B008 -- frozen, shared safely
        sessions: SessionStore | None = None,
        max_steps: int = 25,
        policy: DispatchPolicy = _DEFAULT_POLICY,
        executor: Executor | None = None,
        session_lease: float = 60.0,
        state_keys: Sequence[bytes] = (),
        model_deadline: float = DEFAULT_MODEL_DEADLINE,
        allow_pickle: bool = False,
        errors: Sequence[type[Exception]] = (),
    ) -> None:
        _require_dbos()
        from runner._durable.codec import allowed
        from runner._durable.workflows import Workflows

        check_type("allow_pickle", allow_pickle, bool, "True or False")
        _refuse_typed(agent)
        if not isinstance(errors, tuple | list):
            msg = f"errors must be a list of Exception classes, got {type(errors).__name__}"
            raise TypeError(msg)
        known = allowed(errors)

        launcher = Launcher.checked(
            agent,
            kind="DurableRunner",
            callbacks=callbacks,
            retry=retry,
            sessions=sessions,
            max_steps=max_steps,
            policy=policy,
            executor=executor,
            rng=None,
            session_lease=session_lease,
            state_keys=state_keys,
            model_deadline=model_deadline,
        )
        self._launcher: Final = launcher
        self.agent: Final = agent
        self.sessions: Final[SessionStore] = launcher.sessions
        self.session_lease: Final = launcher.session_lease
        name = agent.name if name is None else name
        check_id("DurableRunner name", name)
        with _names_lock:
            if name in _names:
                msg = (
                    f"a DurableRunner named {name!r} already exists in this process; "
                    "DBOS finds a run's code by its runner's name: give each its own"
                )
                raise ValueError(msg)
            _names.add(name)
        self.name: Final = name
        self.allow_pickle: Final = allow_pickle
        self._workflows: Final[Workflows] = Workflows(
            name, launcher, allow_pickle=allow_pickle, errors=known
        )

    @staticmethod
    def serializer() -> Serializer:
        """DBOS's serializer for durable runs: JSON in, JSON out, never pickle.

        Give it to DBOS in every process: ``DBOS(config={..., "serializer":
        DurableRunner.serializer()})``. It stores what durable runs store (JSON values,
        the project's records, errors) and refuses any other value with a ``TypeError``.
        """
        _require_dbos()
        from runner._durable.serializer import JSONSerializer

        return JSONSerializer()

    def run(
        self,
        message: str | Message,
        *,
        run_id: str | None = None,
        user_id: str = "user",
        session_id: str | None = None,
    ) -> RunResult:
        """Run the agent on ``message`` as workflow ``run_id`` (a fresh id by default).

        Idempotent: a ``run_id`` that already names a run returns that run's result (or
        raises its error) without running anything again, and one that is under way
        (recovering after a restart, or queued) is waited for. An unrecovered model
        error is raised with its own type, as from ``Runner.run``. Needs a launched
        DBOS; raises ``RuntimeError`` inside a running event loop (use ``arun``).
        """
        refuse_inside_loop("run", "arun", owner="DurableRunner")
        return self._workflows.run(*self._inputs(message, run_id, user_id, session_id))

    async def arun(
        self,
        message: str | Message,
        *,
        run_id: str | None = None,
        user_id: str = "user",
        session_id: str | None = None,
    ) -> RunResult:
        """``run`` for async code: async models, tools and callbacks are awaited."""
        return await self._workflows.arun(*self._inputs(message, run_id, user_id, session_id))

    def enqueue(
        self,
        queue: str,
        message: str | Message,
        *,
        run_id: str | None = None,
        user_id: str = "user",
        session_id: str | None = None,
    ) -> str:
        """Put a run on DBOS queue ``queue`` and return its run id; ``result`` waits for it.

        Any process that made this runner, launched DBOS on the same system database
        and registered the queue (``DBOS.register_queue(queue)``) may take the run;
        DBOS hands each queued run to one of them.
        """
        check_id("queue", queue)
        inputs = self._inputs(message, run_id, user_id, session_id)
        self._workflows.enqueue(queue, *inputs)
        return inputs[0]

    def result(self, run_id: str) -> RunResult:
        """Wait for run ``run_id`` to end, wherever it runs: its result, or its error raised.

        Raises ``LookupError`` when no run has that id.
        """
        check_id("run_id", run_id)
        return self._workflows.result(run_id)

    async def aresult(self, run_id: str) -> RunResult:
        """``result`` for async code."""
        check_id("run_id", run_id)
        return await self._workflows.aresult(run_id)

    def resume(self, state: RunState, decisions: Mapping[str, Decision]) -> RunResult:
        """Go on with a paused durable run, as ``Runner.resume`` does, as a workflow of its own.

        The decisions are checked here first (``InvalidDecisions``, ``ResumeRefused``), so
        no bad decision is ever recorded. The resume's workflow id derives from the paused
        state and the decisions: calling again with the same ones returns the same result
        (waiting if it is under way or recovering after a crash); other decisions for a
        state already resumed are refused when the workflow starts (``ResumeRefused``).
        """
        refuse_inside_loop("resume", "aresume", owner="DurableRunner")
        return self._workflows.resume(*self._resume_inputs(state, decisions))

    async def aresume(self, state: RunState, decisions: Mapping[str, Decision]) -> RunResult:
        """``resume`` for async code."""
        return await self._workflows.aresume(*self._resume_inputs(state, decisions))

    def resume_stream(
        self, state: RunState, decisions: Mapping[str, Decision], *, hold: Hold = "auto"
    ) -> NoReturn:
        """Refused with ``NotImplementedError``: a durable run is not streamed; ``aresume``
        goes on with it and returns its result.

        ``Runner.resume_stream`` steps its run inside the consumer's task, handing out each
        piece as the model writes it. A durable run cannot be handed out so: its workflow
        runs wherever DBOS starts or recovers it (a queue's worker, the next process
        after a crash), and each model call is a step whose whole answer DBOS records
        and, on recovery, reads back instead of asking the model again, so there are no
        pieces to show.
        """
        msg = (
            "DurableRunner.resume_stream: a durable run is not streamed -- its workflow runs "
            "wherever DBOS starts or recovers it, and each model call is a step whose whole "
            "answer is recorded and read back on recovery, so no piece can reach this caller "
            "as it is written; use await runner.aresume(state, decisions) for the result, "
            "or a Runner to stream"
        )
        raise NotImplementedError(msg)

    def paused(self, run_id: str) -> RunState | None:
        """The state of paused run ``run_id`` as the session store keeps it, or ``None``."""
        check_id("run_id", run_id)
        text = self.sessions.load_paused(run_id)
        return None if text is None else RunState.from_json(text)

    # The 0.2 names of the async twins, kept: the same methods.
    run_async = arun
    result_async = aresult
    resume_async = aresume

    def close(self) -> None:
        """Refuse new runs and release the thread pool once none is under way; DBOS stays as
        the application set it."""
        self._launcher.close()

    def __enter__(self) -> DurableRunner:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<DurableRunner {self.name!r} of agent {self.agent.name!r}>"

    def _inputs(
        self, message: str | Message, run_id: str | None, user_id: str, session_id: str | None
    ) -> tuple[str, Message, str, str | None]:
        """The workflow's id and inputs, each checked before anything is started."""
        checked = as_message(message)
        check_id("user_id", user_id)
        if session_id is not None:
            check_id("session_id", session_id)
        return self._run_id(run_id), checked, user_id, session_id

    def _resume_inputs(
        self, state: RunState, decisions: Mapping[str, Decision]
    ) -> tuple[str, str, dict[str, dict[str, Any]]]:
        """The resume's workflow id and inputs, once the decisions fit the state."""
        state, _ = checked_decisions(self.agent, state, decisions)
        self._launcher.check_callbacks(state)
        text = state.to_json()
        encoded = {key: encode_decision(decision) for key, decision in decisions.items()}
        digest = hashlib.sha256(
            (text + json.dumps(encoded, sort_keys=True, ensure_ascii=False)).encode()
        ).hexdigest()[:24]
        return f"{state.run_id}:resume:{digest}", text, encoded

    def _run_id(self, run_id: str | None) -> str:
        if run_id is None:
            return secrets.token_hex(16)
        check_id("run_id", run_id)
        return run_id


def _refuse_typed(agent: Agent) -> None:
    """Refuse, before anything is registered, an agent a durable run cannot serve yet: a
    typed answer (its result is stored as JSON records) or deps (a recovered workflow
    would have none to give its tools)."""
    for each in agent.walk():
        if each.output is not None or each.deps_type is not None:
            what = "an output_type" if each.output is not None else "a deps_type"
            msg = (
                f"DurableRunner cannot run agent {each.name!r} yet: it has {what}, which "
                "only Runner supports for now"
            )
            raise NotImplementedError(msg)
