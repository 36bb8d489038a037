"""What DBOS holds of a durable run is JSON, and a forged pickle record is refused, never run.

Each test launches DBOS on a database of its own (SQLite, or the Postgres cluster) and
reads or rewrites DBOS's own tables with SQL, as an attacker with write access would.
"""

from __future__ import annotations

import asyncio
import base64
import json
import pickle
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy
from dbos import DBOS, DBOSClient

from runner import Agent, DurableRunner, RunResult
from tests.helpers.durable import Booking, durable, launched_on, unique

pytestmark = [pytest.mark.durable]


class _Touch:
    """Unpickled, it creates ``path``: what a forged record would do to the process reading it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, ...]:
        return Path.touch, (self.path,)


def forged(marker: Path) -> str:
    """A pickle payload in DBOS's default encoding (base64) that creates ``marker``."""
    return base64.b64encode(pickle.dumps(_Touch(marker))).decode("ascii")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """DBOS launched on a fresh database for this test; its URL."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    else:
        base: str = request.getfixturevalue("postgres")
        url = f"{base}/records_{uuid.uuid4().hex[:12]}"
    with launched_on(url):
        yield url


def _tables(url: str) -> tuple[sqlalchemy.Engine, str]:
    if url.startswith("sqlite"):
        return sqlalchemy.create_engine(url), ""
    return sqlalchemy.create_engine(
        url.replace("postgresql://", "postgresql+psycopg://", 1)
    ), "dbos."


def _rows(url: str, query: str, **params: object) -> list[Any]:
    engine, schema = _tables(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(sqlalchemy.text(query.format(s=schema)), params))
    finally:
        engine.dispose()


def _write(url: str, query: str, **params: object) -> None:
    engine, schema = _tables(url)
    try:
        with engine.begin() as connection:
            connection.execute(sqlalchemy.text(query.format(s=schema)), params)
    finally:
        engine.dispose()


def _trip() -> tuple[DurableRunner, RunResult]:
    def flight(city: str) -> str:
        """Book a flight."""
        return f"flight to {city}"

    runner = durable(Agent("records", Booking("flight"), tools=[flight]))
    return runner, runner.run("book Paris", run_id=unique("records"))


def test_every_record_dbos_keeps_of_a_run_is_json(database: str) -> None:
    """Inputs, output and every step's output of a run, in DBOS's own tables, parse as JSON and
    name hookline's serializer; no pickle anywhere."""
    _, result = _trip()
    [status] = _rows(
        database,
        "select i.inputs, o.output, s.serialization from {s}workflow_status s "
        "join {s}workflow_input i on i.workflow_uuid = s.workflow_uuid "
        "join {s}workflow_output o on o.workflow_uuid = s.workflow_uuid "
        "where s.workflow_uuid = :id",
        id=result.run_id,
    )
    steps = _rows(
        database,
        "select function_name, output, error, serialization from {s}operation_outputs "
        "where workflow_uuid = :id",
        id=result.run_id,
    )
    assert len(steps) >= 4  # session load, model, tool, model, session save
    assert status.serialization == "hookline_json"
    assert {step.serialization for step in steps} == {"hookline_json"}
    texts = [status.inputs, status.output]
    texts += [text for step in steps for text in (step.output, step.error) if text is not None]
    assert len(texts) >= len(steps) + 2  # each step recorded a value or an error
    for text in texts:
        json.loads(text)  # JSON, or this raises
    inputs = json.loads(status.inputs)
    assert "book Paris" in json.dumps(inputs)
    assert json.loads(json.loads(status.output))["$t"] == "RunResult"


def test_a_forged_pickle_result_is_refused_by_hookline_and_by_dbos(
    database: str, tmp_path: Path
) -> None:
    """A run's stored result rewritten to a pickle payload: reading it through the runner, DBOS
    and a DBOS client is a ValueError naming a durable record; the payload never runs."""
    runner, result = _trip()
    marker = tmp_path / "unpickled"
    _write(
        database,
        "update {s}workflow_output set output = :output where workflow_uuid = :id",
        output=forged(marker),
        id=result.run_id,
    )
    with pytest.raises(ValueError, match="a durable record must be JSON text"):
        runner.result(result.run_id)
    with pytest.raises(ValueError, match="a durable record must be JSON text"):
        asyncio.run(runner.aresult(result.run_id))
    with pytest.raises(ValueError, match="a durable record must be JSON text"):
        DBOS.retrieve_workflow(result.run_id).get_result()
    client = DBOSClient(system_database_url=database, serializer=DurableRunner.serializer())
    try:
        with pytest.raises(ValueError, match="a durable record must be JSON text"):
            client.retrieve_workflow(result.run_id).get_result()
    finally:
        client.destroy()
    assert not marker.exists()


def test_a_forged_pickle_step_fails_the_recovered_run_and_never_runs(
    database: str, tmp_path: Path
) -> None:
    """A step's output rewritten to a pickle payload, then the run re-executed from after it
    (what recovery does): the run fails with a ValueError naming the record; nothing unpickled."""
    runner, result = _trip()
    marker = tmp_path / "unpickled"
    steps = DBOS.list_workflow_steps(result.run_id)
    [model] = [step["function_id"] for step in steps if step["function_name"].startswith("model")][
        :1
    ]
    _write(
        database,
        "update {s}operation_outputs set output = :output "
        "where workflow_uuid = :id and function_id = :step",
        output=forged(marker),
        id=result.run_id,
        step=model,
    )
    fork = DBOS.fork_workflow(result.run_id, model + 1).workflow_id
    with pytest.raises(ValueError, match="a durable record must be JSON text"):
        runner.result(fork)
    assert not marker.exists()


def test_a_runner_refuses_dbos_s_pickle_serializer_unless_it_allows_pickle(tmp_path: Path) -> None:
    """Under DBOS's default serializer a run is refused before anything is recorded (the error
    says what to configure); a runner made with ``allow_pickle=True`` runs there."""
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    with launched_on(url, serializer=None):
        runner = durable(Agent("pickled", Booking()))
        with pytest.raises(RuntimeError, match=r'"serializer": DurableRunner\.serializer\(\)'):
            runner.run("hi", run_id="refused")
        with pytest.raises(RuntimeError, match="unpickles what it reads"):
            runner.result("refused")
        assert DBOS.get_workflow_status("refused") is None
        opted = DurableRunner(
            Agent("pickled", Booking()), name=unique("pickled"), allow_pickle=True
        )
        try:
            assert opted.run("hi", run_id="opted").output == "Done: ."
            [step] = [
                s for s in DBOS.list_workflow_steps("opted") if s["function_name"] == "session save"
            ]
            assert type(step["output"]) is bytes  # pickled, as asked
        finally:
            opted.close()


def test_a_run_under_dbos_s_default_executor_id_is_refused_in_process(tmp_path: Path) -> None:
    """Launched without an executor id, a run (sync or async) is refused before it is recorded;
    reading a result is not."""
    with launched_on(f"sqlite:///{tmp_path / 'runs.sqlite'}", executor_id=None):
        runner = durable(Agent("shared", Booking()))
        with pytest.raises(RuntimeError, match="default executor id 'local'"):
            runner.run("hi", run_id="shared")
        with pytest.raises(RuntimeError, match="Give each worker process its own id"):
            asyncio.run(runner.arun("hi", run_id="shared"))
        assert DBOS.get_workflow_status("shared") is None
        with pytest.raises(LookupError, match="no durable run 'shared'"):
            runner.result("shared")
