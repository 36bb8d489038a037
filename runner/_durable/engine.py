"""``DbosEngine``: a durable run's engine; each attempt a DBOS step, the rest read off the record.

Inside a DBOS workflow every model attempt, tool attempt, retry wait and session load
and save is a step: DBOS records what it returned (or raised) and, when a crashed run
is recovered, hands the record back instead of running it again. Everything else a
run reads is made deterministic from the record, so the recovered run takes the same
path and leaves the same result as an uninterrupted one:

- the clock is the time the last step ended (recorded with its value), so events
  between two steps carry the earlier one's end;
- ids derive from the run id and a counter;
- a retry's wait is drawn in a step (jitter, or what a ``Retry(delay=...)`` asked) and
  slept with ``DBOS.sleep``, which a recovered run does not sleep again;
- a step's value or error is stored through the runner's codec (``runner._durable.codec``:
  JSON, errors rebuilt from an allow-list), and the run goes on with the stored copy
  the first time too, so its hooks see alike and decide alike both times.

The steps run one by one in the run's order (``ordered``): DBOS matches a replayed
step to its record by its place, and checks the recorded name (``model assistant``,
``tool assistant add``) so a run that took another path fails loudly.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any, Final, TypeVar, cast, final

from dbos import DBOS, StepOptions

from hooks import Failure, ModelResponse, Outcome, StopRun, Success, ToolCall, ToolResult
from runner._durable.codec import Codec, StoredError
from runner._durable.idempotency import KEY
from runner._run.drive import complete
from runner._run.engine import ModelAttempt, ToolAttempt

__all__ = ["DbosEngine"]

T = TypeVar("T")

_IDS: Final = uuid.UUID("6f1d4a52-8e1b-4c2e-9a57-3d0c7b9e2f10")  # namespace of a run's ids


@final
class DbosEngine:
    """The engine of one durable run: its attempts are DBOS steps of workflow ``run_id``."""

    __slots__ = ("_codec", "_ids", "_now", "is_async", "run_id")

    def __init__(self, run_id: str, *, is_async: bool, codec: Codec) -> None:
        self.run_id: Final = run_id
        self._codec: Final = codec
        self.is_async: Final = is_async
        self._now = 0.0
        self._ids = 0

    @property
    def ordered(self) -> bool:
        """Yes: steps are matched to their record by their place in the run."""
        return True

    def now(self) -> float:
        """When the last step ended, as it was recorded."""
        return self._now

    def new_id(self) -> str:
        """The run's next id: the same, in the same order, on every execution of the run."""
        self._ids += 1
        return uuid.uuid5(_IDS, f"{self.run_id}/{self._ids}").hex

    async def model(self, branch: str, attempt: ModelAttempt, /) -> Outcome[ModelResponse]:
        """The attempt as the step ``model {branch}``: run, or read off the record."""
        return await self._step(f"model {branch}", attempt)

    async def tool(
        self, branch: str, call: ToolCall, attempt: ToolAttempt, /
    ) -> Outcome[ToolResult]:
        """The attempt as the step ``tool {branch} {name}``, with the tool's idempotency key
        set (a sync tool on a worker thread sees it too: attempts run in a copy of this
        context)."""

        async def keyed() -> Outcome[ToolResult]:
            token = KEY.set(f"{self.run_id}:{DBOS.step_id}:{call.id}")
            try:
                return await attempt()
            finally:
                KEY.reset(token)

        return await self._step(f"tool {branch} {call.name}", keyed)

    async def delay(self, seconds: float, /) -> float:
        """The wait the run drew, recorded in a step: a recovered run waits the same."""

        async def draw() -> Outcome[float]:
            return Success(seconds)

        return (await self._step("retry delay", draw)).unwrap()

    async def sleep(self, seconds: float, is_async: bool, /) -> None:
        """A durable sleep: recovery sleeps only what was left of it."""
        if seconds <= 0:
            return
        if self.is_async:
            await DBOS.sleep_async(seconds)
        else:
            DBOS.sleep(seconds)
        self._now += seconds  # deterministic: the recorded wait, not the clock

    async def record(self, name: str, fn: Callable[[], T]) -> T:
        """``fn()`` as a step named ``name``: its value, or what it raised, raised again."""

        async def call() -> Outcome[T]:
            try:
                return Success(fn())
            except Exception as exc:
                return Failure(exc)

        outcome = await self._step(name, call)
        if type(outcome) is Failure:
            raise outcome.failure()
        return outcome.unwrap()

    async def _step(
        self, name: str, attempt: Callable[[], Coroutine[Any, Any, Outcome[T]]]
    ) -> Outcome[T]:
        """``attempt`` as the step ``name``: its outcome, recorded or replayed.

        The step returns the value with the time it ended, stored (the runner's codec),
        or raises a ``StoredError`` (so DBOS shows the step failed) holding the error and
        that time. What the run goes on with is the stored copy, the first time as on
        recovery. A ``StopRun`` is stored like any error, and raised again.
        """

        codec = self._codec

        async def body() -> str | bytes:
            try:
                outcome = await attempt()
            except StopRun as stop:
                raise _failed(stop, codec) from None
            if type(outcome) is Success:
                return codec.dump((outcome.unwrap(), time.time()))
            raise _failed(outcome.failure(), codec)

        options = StepOptions(name=name)
        try:
            if self.is_async:
                blob = await DBOS.run_step_async(options, body)
            else:
                blob = DBOS.run_step(options, lambda: complete(body()))
        except StoredError as failed:
            error, self._now = _pair(codec.load(failed.blob), BaseException)
            if isinstance(error, StopRun):
                raise error from None
            return Failure(error)
        value, self._now = _pair(codec.load(blob), object)
        return Success(value)


def _failed(error: BaseException, codec: Codec) -> StoredError:
    return StoredError(codec.dump((error, time.time())), f"{type(error).__qualname__}: {error}")


def _pair(record: object, kind: type[Any]) -> tuple[Any, float]:
    """A step's record: its value (of ``kind``) and the time it ended; a ``ValueError`` else."""
    shown = f"{record!r:.80}"
    pair = cast("tuple[object, ...]", record) if type(record) is tuple else ()
    if len(pair) != 2 or not isinstance(pair[0], kind) or type(pair[1]) is not float:
        msg = f"a durable step's record must be ({kind.__name__}, end time), got {shown}"
        raise ValueError(msg)
    return cast("tuple[Any, float]", pair)
