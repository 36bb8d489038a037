"""Fixtures of the runner tests: the sync/async ``mode`` and the runner's recorded waits."""

from __future__ import annotations

import pytest

from tests.helpers.runs import MODES, Mode


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Mode:
    """Run the test once through ``Runner.run`` and once through ``Runner.arun``."""
    value: Mode = request.param
    return value


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float]]:
    """Record the runner's waits (``time.sleep`` or ``asyncio.sleep``) instead of sleeping."""
    record: list[tuple[str, float]] = []

    def fake_sleep(seconds: float) -> None:
        record.append(("time", seconds))

    async def fake_asleep(seconds: float) -> None:
        record.append(("asyncio", seconds))

    monkeypatch.setattr("runner._run.engine.time.sleep", fake_sleep)
    monkeypatch.setattr("runner._run.engine.asyncio.sleep", fake_asleep)
    return record
