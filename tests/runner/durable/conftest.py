"""Fixtures of the durable-run tests: DBOS launched per module, a throwaway PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.durable import launched_on
from tests.helpers.postgres import cluster


@pytest.fixture(scope="module")
def launched(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """DBOS launched on a fresh SQLite database for this module; its path."""
    database = tmp_path_factory.mktemp("dbos") / "runs.sqlite"
    with launched_on(database):
        yield database


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """The base URL of the session's throwaway cluster, started by the first test that asks;
    the test fails (never skips) when no cluster can start."""
    with contextlib.ExitStack() as stack:
        try:
            url = stack.enter_context(cluster())
        except RuntimeError as exc:
            pytest.fail(str(exc))
        yield url
