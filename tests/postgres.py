"""A throwaway PostgreSQL cluster for the tests: ``postgres`` (a fixture) gives its base URL.

The server binaries are PostgreSQL's own (``pg_config --bindir``, else the newest
``/usr/lib/postgresql/*/bin``); as root, ``initdb`` and the server run as the
``postgres`` user (``.ci/run`` makes sure there is one). The cluster lives in a temp
directory, listens on 127.0.0.1 on a free port, trusts local connections, skips
fsync, and is started once per test session (by the first test that asks) and
stopped, its directory removed, when the session ends. A test names its own
database in the URL (``f"{postgres}/my_test"``): DBOS creates it on launch.

Not a conftest: modules that need it import it (``postgres = postgres_cluster.postgres``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

_STARTED: dict[str, str] = {}  # "url" -> the running cluster's base URL


def bindir() -> Path:
    """Where ``initdb`` and ``pg_ctl`` are; a clear failure (never a skip) if nowhere."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        done = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=False
        )
        candidates.append(Path(done.stdout.strip()))
    candidates.extend(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True))
    for candidate in candidates:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    pytest.fail(
        "the Postgres tests need PostgreSQL's server binaries (initdb, pg_ctl); none found "
        f"in {[str(c) for c in candidates]}: install the server (.ci/run checks for it)"
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _as_postgres(command: list[str]) -> list[str]:
    """``command`` as the ``postgres`` user when we are root (initdb refuses root)."""
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _run(command: list[str]) -> None:
    done = subprocess.run(
        _as_postgres(command), capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        pytest.fail(f"{command[0]} failed ({done.returncode}): {done.stderr or done.stdout}")


def _start(config: pytest.Config) -> str:
    bin_ = bindir()
    home = Path(tempfile.mkdtemp(prefix="hookline-postgres-"))
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
    data, port = home / "data", _free_port()
    pg_ctl = str(bin_ / "pg_ctl")

    def stop() -> None:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_postgres(
                    [pg_ctl, "-D", str(data), "-m", "immediate", "-w", "-t", "30", "stop"]
                ),
                capture_output=True,
                timeout=60,
                check=False,
            )
        shutil.rmtree(home, ignore_errors=True)

    config.add_cleanup(stop)  # also when starting fails half-way
    _run([str(bin_ / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"])
    options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
    log = str(home / "server.log")
    _run([pg_ctl, "-D", str(data), "-o", options, "-l", log, "-w", "-t", "60", "start"])
    return f"postgresql://postgres@127.0.0.1:{port}"


@pytest.fixture
def postgres(request: pytest.FixtureRequest) -> str:
    """The base URL of the session's throwaway cluster, started by the first test that asks."""
    if "url" not in _STARTED:
        _STARTED["url"] = _start(request.config)
    return _STARTED["url"]
