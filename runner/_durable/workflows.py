"""The DBOS side of a ``DurableRunner``: its workflows, and how a run starts, waits, queues.

A run is the workflow ``hookline:{name}`` (``Runner.run``'s loop, driven without an
event loop) or ``hookline:{name}:async`` (``arun``'s), keyed by the run id; the
resume of a paused run is ``hookline:{name}:resume`` (and ``:resume:async``), keyed by
the paused state and the decisions. What runs inside them: ``runner._durable.body``.

Before a run starts, is waited for or is read, DBOS's config is checked (``checked``):
its serializer must be ``DurableRunner.serializer()``'s JSON (a runner made with
``allow_pickle=True`` takes DBOS's pickle too), and its executor id must not be DBOS's
default ``"local"``, which every process has that was not given one of its own: a
second process launching on the same database would recover this one's runs while
they are under way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

from dbos import DBOS, SetWorkflowID, WorkflowHandle, WorkflowHandleAsync, WorkflowStatus
from dbos import error as dbos_errors

from hooks import Message
from runner._durable.body import resume_body, run_body
from runner._durable.codec import PICKLE, StoredError, json_codec
from runner._durable.serializer import NAME
from runner._events import RunResult
from runner._run.drive import complete

if TYPE_CHECKING:
    from runner._run.launch import Launcher

__all__ = ["Workflows"]


@final
class Workflows:
    """The workflows of one ``DurableRunner``, registered with DBOS under its name."""

    __slots__ = (
        "_async",
        "_resume",
        "_resume_async",
        "_sync",
        "allow_pickle",
        "async_name",
        "codec",
        "name",
        "names",
    )

    def __init__(
        self,
        name: str,
        launcher: Launcher,
        *,
        allow_pickle: bool,
        errors: Mapping[str, type[Exception]],
    ) -> None:
        self.name: Final = f"hookline:{name}"
        self.async_name: Final = f"hookline:{name}:async"
        self.allow_pickle: Final = allow_pickle
        codec = self.codec = PICKLE if allow_pickle else json_codec(errors)

        def run(message: Message, user_id: str, session_id: str | None) -> str | bytes:
            body = run_body(launcher, message, user_id, session_id, is_async=False, codec=codec)
            return complete(body)

        async def arun(message: Message, user_id: str, session_id: str | None) -> str | bytes:
            return await run_body(
                launcher, message, user_id, session_id, is_async=True, codec=codec
            )

        def resume(state_json: str, decisions: Mapping[str, Any]) -> str | bytes:
            body = resume_body(launcher, state_json, decisions, is_async=False, codec=codec)
            return complete(body)

        async def aresume(state_json: str, decisions: Mapping[str, Any]) -> str | bytes:
            return await resume_body(launcher, state_json, decisions, is_async=True, codec=codec)

        self._sync: Final = DBOS.workflow(name=self.name)(run)
        self._async: Final = DBOS.workflow(name=self.async_name)(arun)
        self._resume: Final = DBOS.workflow(name=f"{self.name}:resume")(resume)
        self._resume_async: Final = DBOS.workflow(name=f"{self.name}:resume:async")(aresume)
        self.names: Final = (
            self.name,
            self.async_name,
            f"{self.name}:resume",
            f"{self.name}:resume:async",
        )

    def run(self, run_id: str, message: Message, user_id: str, session_id: str | None) -> RunResult:
        """Start run ``run_id``, or wait for it if it exists; its result, or its error raised."""
        self.checked(starting=True)
        if self._exists(DBOS.get_workflow_status(run_id)):
            return self.result(run_id)
        with SetWorkflowID(run_id):
            return self._result(lambda: self._sync(message, user_id, session_id))

    async def arun(
        self, run_id: str, message: Message, user_id: str, session_id: str | None
    ) -> RunResult:
        """``run`` for async code, on the async workflow."""
        self.checked(starting=True)
        if self._exists(await DBOS.get_workflow_status_async(run_id)):
            return await self.aresult(run_id)
        with SetWorkflowID(run_id):
            return await self._awaited(self._async(message, user_id, session_id))

    def resume(self, resume_id: str, state_json: str, decisions: Mapping[str, Any]) -> RunResult:
        """Start the resume ``resume_id`` of a paused run, or wait for it if it exists."""
        self.checked(starting=True)
        if self._exists(DBOS.get_workflow_status(resume_id)):
            return self.result(resume_id)
        with SetWorkflowID(resume_id):
            return self._result(lambda: self._resume(state_json, decisions))

    async def aresume(
        self, resume_id: str, state_json: str, decisions: Mapping[str, Any]
    ) -> RunResult:
        """``resume`` for async code, on the async resume workflow."""
        self.checked(starting=True)
        if self._exists(await DBOS.get_workflow_status_async(resume_id)):
            return await self.aresult(resume_id)
        with SetWorkflowID(resume_id):
            return await self._awaited(self._resume_async(state_json, decisions))

    def enqueue(
        self, queue: str, run_id: str, message: Message, user_id: str, session_id: str | None
    ) -> None:
        """Put run ``run_id`` on DBOS queue ``queue``, for any process listening to it."""
        self.checked(starting=True)
        found = DBOS.retrieve_queue(queue)
        if found is None:
            msg = (
                f"no DBOS queue named {queue!r}; register it after DBOS.launch(), in the "
                f"processes that run its runs too: DBOS.register_queue({queue!r})"
            )
            raise LookupError(msg)
        with SetWorkflowID(run_id):
            found.enqueue(self._sync, message, user_id, session_id)

    def result(self, run_id: str) -> RunResult:
        """Wait for run ``run_id`` (started, queued or recovering anywhere) to end."""
        self.checked(starting=False)
        handle: WorkflowHandle[str | bytes] = _known(run_id, DBOS.retrieve_workflow)
        return self._result(handle.get_result)

    async def aresult(self, run_id: str) -> RunResult:
        """``result`` for async code."""
        self.checked(starting=False)
        try:
            handle: WorkflowHandleAsync[str | bytes] = await DBOS.retrieve_workflow_async(run_id)
        except dbos_errors.DBOSNonExistentWorkflowError:
            raise _unknown(run_id) from None
        return await self._awaited(handle.get_result())

    def checked(self, *, starting: bool) -> None:
        """Refuse to run under a DBOS that would unpickle what it reads, or (``starting``) one
        whose executor id is DBOS's default, which another process would take runs over with."""
        serializer = _serializer_name()
        if serializer != NAME and not self.allow_pickle:
            msg = (
                f"DBOS stores workflow values with its serializer {serializer!r}, which "
                "unpickles what it reads; launch DBOS with hookline's JSON serializer: "
                'DBOS(config={..., "serializer": DurableRunner.serializer()}) (or make the '
                "runner with allow_pickle=True to accept pickle, see docs/durable.md)"
            )
            raise RuntimeError(msg)
        if starting and DBOS.executor_id == _DEFAULT_EXECUTOR:
            msg = (
                f"DBOS runs under its default executor id {_DEFAULT_EXECUTOR!r}, which every "
                "process launched without one has: another would recover this process's runs "
                "while they are under way. Give each worker process its own id, the same "
                'when it restarts: DBOS(config={..., "executor_id": os.environ["WORKER_ID"]})'
            )
            raise RuntimeError(msg)

    async def _awaited(self, blob: Awaitable[str | bytes]) -> RunResult:
        try:
            return _run_result(self.codec.load(await blob))
        except StoredError as failed:
            raise _error(self.codec.load(failed.blob)) from None

    def _result(self, get: Callable[[], str | bytes]) -> RunResult:
        try:
            return _run_result(self.codec.load(get()))
        except StoredError as failed:
            raise _error(self.codec.load(failed.blob)) from None

    def _exists(self, status: WorkflowStatus | None) -> bool:
        """Whether the run exists (asked first: attaching to a recovering run makes DBOS warn)."""
        if status is None:
            return False
        if status.name not in self.names:
            msg = (
                f"run id {status.workflow_id!r} names a run of DBOS workflow {status.name!r}, "
                f"not one of this runner's ({self.name!r}); give each run its own id"
            )
            raise ValueError(msg)
        return True


_DEFAULT_EXECUTOR: Final = "local"  # DBOS's executor id when its config and env give none


def _serializer_name() -> str:
    """The name of the serializer DBOS was made with (``py_pickle``: DBOS's default)."""
    from dbos._dbos import _get_dbos_instance  # pyright: ignore[reportPrivateUsage]

    serializer: object = getattr(_get_dbos_instance(), "_serializer", None)
    name = getattr(serializer, "name", None)
    return str(name()) if callable(name) else "unknown"


def _run_result(value: object) -> RunResult:
    if type(value) is not RunResult:
        msg = f"a durable run's record must hold a RunResult, got {type(value).__name__}"
        raise ValueError(msg)
    return value


def _error(value: object) -> BaseException:
    if not isinstance(value, BaseException):
        msg = f"a durable run's failure record must hold an error, got {type(value).__name__}"
        raise ValueError(msg)
    return value


def _known(run_id: str, retrieve: Callable[[str], Any]) -> Any:
    try:
        return retrieve(run_id)
    except dbos_errors.DBOSNonExistentWorkflowError:
        raise _unknown(run_id) from None


def _unknown(run_id: str) -> LookupError:
    return LookupError(f"no durable run {run_id!r} in DBOS's system database")
