"""Runs the server drives, watched as they go (``runner.web._live``)."""

from __future__ import annotations

import asyncio

from runner.web._live import Live, LiveRuns


def test_a_watcher_gets_what_came_before_then_each_record_live_then_the_end() -> None:
    """One watcher joins before the run's second record, another after its end: both get
    every record in order, and their iteration ends with the run."""

    async def scenario() -> tuple[list[int], list[int]]:
        live = Live()
        live.push({"n": 0})
        early: list[int] = []

        async def watch(into: list[int]) -> None:
            async for record in live.watch():
                into.append(record["n"])

        watcher = asyncio.create_task(watch(early))
        await asyncio.sleep(0)  # the watcher joins and reads what came before
        assert early == [0]
        live.push({"n": 1})
        await asyncio.sleep(0)
        assert early == [0, 1]  # live, before the run ends
        live.finish({"n": 2})
        await watcher
        late: list[int] = []
        await watch(late)
        return early, late

    early, late = asyncio.run(scenario())
    assert early == late == [0, 1, 2]


def test_records_are_numbered_and_the_first_marks_the_run_started() -> None:
    """Each record gets its arrival number; ``started`` is set by the first."""

    async def scenario() -> None:
        live = Live()
        assert not live.started.is_set()
        live.push({"kind": "hook"})
        live.push({"kind": "hook"})
        assert live.started.is_set()
        assert [record["seq"] for record in live.records] == [0, 1]

    asyncio.run(scenario())


def test_the_table_keeps_the_latest_run_per_id_and_drops_the_oldest_ended() -> None:
    """A new resume of a run replaces its record; past ``keep``, ended runs go first."""

    async def scenario() -> None:
        runs = LiveRuns(keep=2)
        first = runs.start("r1")
        first.finish({})
        again = runs.start("r1")
        assert runs.get("r1") is again
        runs.start("r2")
        again.finish({})
        runs.start("r3")
        assert runs.get("r1") is None
        assert runs.get("r2") is not None
        assert runs.get("r3") is not None
        runs.drop("r2")
        assert runs.get("r2") is None

    asyncio.run(scenario())
