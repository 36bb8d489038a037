"""The DBOS side of a ``DurableRunner``: its workflows, and how a run starts, waits, queues.

A run is the workflow ``hookline:{name}`` (``Runner.run``'s loop, driven without an
event loop) or ``hookline:{name}:async`` (``arun``'s), keyed by the run id; the
resume of a paused run is ``hookline:{name}:resume`` (and ``:resume:async``), keyed by
the paused state and the decisions. What runs inside them: ``_durable_body``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Final, final

from dbos import DBOS, SetWorkflowID, WorkflowHandle, WorkflowHandleAsync, WorkflowStatus
from dbos import error as dbos_errors

from hooks import Message
from runner._durable.body import resume_body, run_body
from runner._durable.codec import StoredError, load
from runner._events import RunResult
from runner._run.drive import complete

if TYPE_CHECKING:
    from runner._run.launch import Launcher

__all__ = ["Workflows"]


@final
class Workflows:
    """The workflows of one ``DurableRunner``, registered with DBOS under its name."""

    __slots__ = ("_async", "_resume", "_resume_async", "_sync", "async_name", "name", "names")

    def __init__(self, name: str, launcher: Launcher) -> None:
        self.name: Final = f"hookline:{name}"
        self.async_name: Final = f"hookline:{name}:async"

        def run(message: Message, user_id: str, session_id: str | None) -> bytes:
            return complete(run_body(launcher, message, user_id, session_id, is_async=False))

        async def arun(message: Message, user_id: str, session_id: str | None) -> bytes:
            return await run_body(launcher, message, user_id, session_id, is_async=True)

        def resume(state_json: str, decisions: Mapping[str, Any]) -> bytes:
            return complete(resume_body(launcher, state_json, decisions, is_async=False))

        async def aresume(state_json: str, decisions: Mapping[str, Any]) -> bytes:
            return await resume_body(launcher, state_json, decisions, is_async=True)

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
        if self._exists(DBOS.get_workflow_status(run_id)):
            return self.result(run_id)
        with SetWorkflowID(run_id):
            return _result(lambda: self._sync(message, user_id, session_id))

    async def arun(
        self, run_id: str, message: Message, user_id: str, session_id: str | None
    ) -> RunResult:
        """``run`` for async code, on the async workflow."""
        if self._exists(await DBOS.get_workflow_status_async(run_id)):
            return await self.aresult(run_id)
        with SetWorkflowID(run_id):
            return await _awaited(self._async(message, user_id, session_id))

    def resume(self, resume_id: str, state_json: str, decisions: Mapping[str, Any]) -> RunResult:
        """Start the resume ``resume_id`` of a paused run, or wait for it if it exists."""
        if self._exists(DBOS.get_workflow_status(resume_id)):
            return self.result(resume_id)
        with SetWorkflowID(resume_id):
            return _result(lambda: self._resume(state_json, decisions))

    async def aresume(
        self, resume_id: str, state_json: str, decisions: Mapping[str, Any]
    ) -> RunResult:
        """``resume`` for async code, on the async resume workflow."""
        if self._exists(await DBOS.get_workflow_status_async(resume_id)):
            return await self.aresult(resume_id)
        with SetWorkflowID(resume_id):
            return await _awaited(self._resume_async(state_json, decisions))

    def enqueue(
        self, queue: str, run_id: str, message: Message, user_id: str, session_id: str | None
    ) -> None:
        """Put run ``run_id`` on DBOS queue ``queue``, for any process listening to it."""
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
        handle: WorkflowHandle[bytes] = _known(run_id, DBOS.retrieve_workflow)
        return _result(handle.get_result)

    async def aresult(self, run_id: str) -> RunResult:
        """``result`` for async code."""
        try:
            handle: WorkflowHandleAsync[bytes] = await DBOS.retrieve_workflow_async(run_id)
        except dbos_errors.DBOSNonExistentWorkflowError:
            raise _unknown(run_id) from None
        return await _awaited(handle.get_result())

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


async def _awaited(blob: Awaitable[bytes]) -> RunResult:
    try:
        result: RunResult = load(await blob)
    except StoredError as failed:
        raise load(failed.blob) from None
    return result


def _result(get: Callable[[], bytes]) -> RunResult:
    try:
        result: RunResult = load(get())
    except StoredError as failed:
        raise load(failed.blob) from None
    return result


def _known(run_id: str, retrieve: Callable[[str], Any]) -> Any:
    try:
        return retrieve(run_id)
    except dbos_errors.DBOSNonExistentWorkflowError:
        raise _unknown(run_id) from None


def _unknown(run_id: str) -> LookupError:
    return LookupError(f"no durable run {run_id!r} in DBOS's system database")
