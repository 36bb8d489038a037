"""``trampoline``: a run's coroutine stepped in the consumer's task (``_streaming.trampoline``).

The run here is a small coroutine pushing ``TextDelta`` items into a ``Channel``: what
the tests check is how the trampoline hands items, the return value and errors on, and
how a consumer that stops or is cancelled cancels the run and waits for its end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

import pytest

from runner import TextDelta
from runner._streaming.channel import Channel, Item
from runner._streaming.trampoline import Outcome, trampoline

T = TypeVar("T")


def texts(items: list[Item]) -> list[str]:
    """The text of each item (every item here is a ``TextDelta``)."""
    return [item.text for item in items if isinstance(item, TextDelta)]


def ended(outcome: Outcome[T]) -> tuple[bool, T | None]:
    """Whether the run ended, and its return value."""
    return outcome.done, outcome.value


async def consume(
    start: Callable[[], Coroutine[Any, Any, T]], channel: Channel, outcome: Outcome[T]
) -> list[str]:
    """Every item the trampoline yields, to the end of the run."""
    seen: list[str] = []
    async for items in trampoline(start, channel, outcome):
        seen.extend(texts(items))
    return seen


def test_items_come_in_order_and_the_return_value_lands_in_the_outcome() -> None:
    """What each step pushed comes out in order; the outcome, empty until then, holds the
    run's return value once the run has ended."""
    channel, outcome = Channel(), Outcome[str]()
    assert ended(outcome) == (False, None)

    async def run() -> str:
        channel.push(TextDelta("a"))
        channel.push(TextDelta("b"))
        await asyncio.sleep(0)
        await asyncio.sleep(0.001)  # a real future the consumer's task waits on
        channel.push(TextDelta("c"))
        return "answer"

    assert asyncio.run(consume(run, channel, outcome)) == ["a", "b", "c"]
    assert ended(outcome) == (True, "answer")


def test_an_exception_comes_after_the_items_that_led_to_it() -> None:
    """A run that fails after pushing items: the consumer gets the items, then the error;
    the outcome says the run ended, with no value."""
    channel, outcome = Channel(), Outcome[str]()
    seen: list[str] = []

    async def run() -> str:
        channel.push(TextDelta("a"))
        await asyncio.sleep(0)
        channel.push(TextDelta("b"))
        raise ValueError("boom")

    async def main() -> None:
        async for items in trampoline(run, channel, outcome):
            seen.extend(texts(items))

    with pytest.raises(ValueError, match=r"^boom$"):
        asyncio.run(main())
    assert seen == ["a", "b"]
    assert outcome.done is True
    assert outcome.value is None


def test_closing_early_cancels_the_run_and_waits_for_its_cleanup() -> None:
    """``aclose()`` before the end throws ``CancelledError`` where the run waits and drives
    its ``finally`` -- bare yields and a real future alike -- to its end before returning;
    the outcome says the run never returned."""
    channel, outcome = Channel(), Outcome[str]()
    log: list[str] = []

    async def run() -> str:
        channel.push(TextDelta("a"))
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        finally:
            await asyncio.sleep(0)
            await asyncio.sleep(0.001)
            await asyncio.sleep(0)
            log.append("cleaned up")
        return "never"

    async def main() -> list[str]:
        steps = trampoline(run, channel, outcome)
        first = await anext(steps)
        await steps.aclose()
        log.append("closed")
        return texts(first)

    assert asyncio.run(main()) == ["a"]
    assert log == ["cancelled", "cleaned up", "closed"]
    assert outcome.done is False
    assert outcome.value is None


def test_a_consumer_cancelled_while_the_run_yields_cancels_the_run_there() -> None:
    """The consumer's task cancelled while the run only yields to the loop (no future to
    cancel): ``CancelledError`` is thrown into the run at that point, and the consumer ends
    cancelled after the items."""
    channel, outcome = Channel(), Outcome[str]()
    log: list[str] = []
    seen: list[str] = []

    async def run() -> str:
        channel.push(TextDelta("a"))
        try:
            for _ in range(1000):
                await asyncio.sleep(0)
        except asyncio.CancelledError:
            log.append("cancelled")
            raise
        return "spun out"  # only if the cancellation never reached the run

    async def main() -> None:
        async def consumer() -> None:
            async for items in trampoline(run, channel, outcome):
                seen.extend(texts(items))

        task = asyncio.create_task(consumer())
        for _ in range(5):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert (seen, log) == (["a"], ["cancelled"])
    assert outcome.done is True
    assert outcome.value is None


def test_a_consumer_cancelled_again_while_the_run_winds_down_stays_cancelled() -> None:
    """Cancelled while ``aclose()`` drives the cancelled run's cleanup, the consumer's task
    throws that cancellation into the cleanup too, and ``aclose()`` raises it once the run
    has ended: the task ends cancelled, not as if nothing happened."""
    channel, outcome = Channel(), Outcome[str]()
    log: list[str] = []

    async def run() -> str:
        channel.push(TextDelta("a"))
        try:
            await asyncio.sleep(60)
        finally:
            winding.set()
            try:
                for _ in range(1000):
                    await asyncio.sleep(0)
            except asyncio.CancelledError:
                log.append("cleanup cancelled")
                raise
            log.append("cleanup ran out")  # only if the second cancellation was lost
        return "never"

    async def consumer() -> None:
        steps = trampoline(run, channel, outcome)
        await anext(steps)
        try:
            await steps.aclose()
        finally:
            log.append("aclose ended")
        log.append("went on")  # only if the consumer's cancellation was swallowed

    async def main() -> None:
        task = asyncio.create_task(consumer())
        await winding.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    winding = asyncio.Event()
    asyncio.run(main())
    assert log == ["cleanup cancelled", "aclose ended"]
    assert outcome.done is False


def test_a_timeout_expiring_while_the_run_winds_down_still_times_out() -> None:
    """``asyncio.timeout`` around a consumer that closes the stream: when it expires during
    the run's cleanup, the cleanup is cancelled and the block raises ``TimeoutError``."""
    channel, outcome = Channel(), Outcome[str]()
    log: list[str] = []

    async def run() -> str:
        channel.push(TextDelta("a"))
        try:
            await asyncio.sleep(60)
        finally:
            loop = asyncio.get_running_loop()
            end = loop.time() + 2  # a cleanup far longer than the timeout
            try:
                while loop.time() < end:
                    await asyncio.sleep(0)
            except asyncio.CancelledError:
                log.append("cleanup cancelled")
                raise
            log.append("cleanup ran out")  # only if the timeout's cancellation was lost
        return "never"

    async def main() -> None:
        async with asyncio.timeout(0.02):
            steps = trampoline(run, channel, outcome)
            await anext(steps)
            await steps.aclose()
            log.append("past aclose")

    with pytest.raises(TimeoutError):
        asyncio.run(main())
    assert log == ["cleanup cancelled"]


def test_a_stream_closed_before_its_first_step_makes_no_coroutine() -> None:
    """The run's coroutine is made on the first step: closing the stream before that never
    calls ``start`` (no coroutine is left un-awaited)."""
    started: list[str] = []

    async def run() -> str:
        return "never"

    def start() -> Coroutine[Any, Any, str]:
        started.append("start")
        return run()

    async def main() -> None:
        await trampoline(start, Channel(), Outcome[str]()).aclose()

    asyncio.run(main())
    assert started == []
