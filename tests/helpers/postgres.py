"""A throwaway PostgreSQL cluster: ``cluster()``, behind the ``postgres`` fixture.

The server binaries are PostgreSQL's own (``pg_config --bindir``, else the newest
``/usr/lib/postgresql/*/bin``); as root, ``initdb`` and the server run as the
``postgres`` user (``.ci/run`` makes sure there is one). The cluster lives in a temp
directory, listens on 127.0.0.1 on a free port, trusts local connections and skips
fsync; it is stopped and its directory removed on the way out, a failed start too.
A user of it names a database of its own in the URL (``f"{url}/my_test"``): DBOS
creates it on launch.

The fixture (``tests/runner/durable/conftest.py``) starts one cluster per test session,
for the first test that asks, and fails (never skips) when it cannot.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path


def bindir() -> Path:
    """Where ``initdb`` and ``pg_ctl`` are; a ``RuntimeError`` saying where it looked if nowhere."""
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
    msg = (
        "a throwaway Postgres cluster needs PostgreSQL's server binaries (initdb, pg_ctl); "
        f"none in {[str(c) for c in candidates]}: install the server (.ci/run checks for it)"
    )
    raise RuntimeError(msg)


@contextlib.contextmanager
def cluster() -> Iterator[str]:
    """A running cluster's base URL (``postgresql://postgres@127.0.0.1:PORT``), stopped after."""
    bin_ = bindir()
    home = Path(tempfile.mkdtemp(prefix="hookline-postgres-"))
    data, pg_ctl = home / "data", str(bin_ / "pg_ctl")
    try:
        if os.geteuid() == 0:
            shutil.chown(home, "postgres")
        _run([str(bin_ / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres", "--no-sync"])
        port = _free_port()
        options = f"-p {port} -k {home} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(home / "server.log")
        _run([pg_ctl, "-D", str(data), "-o", options, "-l", log, "-w", "-t", "60", "start"])
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        if (data / "postmaster.pid").exists():
            stop = [pg_ctl, "-D", str(data), "-m", "immediate", "-w", "-t", "30", "stop"]
            subprocess.run(_as_postgres(stop), capture_output=True, timeout=60, check=False)
        shutil.rmtree(home, ignore_errors=True)


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
        msg = f"{Path(command[0]).name} failed ({done.returncode}): {done.stderr or done.stdout}"
        raise RuntimeError(msg)
