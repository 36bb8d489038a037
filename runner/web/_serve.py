"""Serving the app: on a socket this process binds, in a thread or in the foreground."""

from __future__ import annotations

import socket
import threading
from collections.abc import Generator
from contextlib import contextmanager
from typing import Any, Final, final

import uvicorn

from runner import SessionStore
from runner.web._app import RunnerSource, WebApp, inbox_app

__all__ = ["Server", "bind", "serve_in_thread", "uvicorn_server"]


@final
class Server:
    """A running server: ``address`` is the page to open, the token in it."""

    __slots__ = ("app", "host", "port")

    def __init__(self, app: WebApp, host: str, port: int) -> None:
        self.app: Final = app
        self.host: Final = host
        self.port: Final = port

    @property
    def token(self) -> str | None:
        """The token every request needs (``None`` when an auth hook decides)."""
        return self.app.token

    def url(self, path: str = "/") -> str:
        """The address of ``path`` on this server (no token in it)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"

    @property
    def address(self) -> str:
        """The inbox's address, with the token a first visit trades for a cookie."""
        return self.url("/") + ("" if self.token is None else f"?token={self.token}")


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host``:``port`` (0: a free port the system picks)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


def uvicorn_server(app: WebApp) -> uvicorn.Server:
    """A quiet uvicorn server for ``app`` (no access log; warnings and errors only)."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    return uvicorn.Server(config)


@contextmanager
def serve_in_thread(
    runner: RunnerSource,
    store: SessionStore,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    **options: Any,
) -> Generator[Server]:
    """Serve ``inbox_app(runner, store, **options)`` on a thread until the block ends.

    Started when the block begins (its socket listening), stopped and joined when it
    ends, the runs it is resuming let finish.
    """
    app = inbox_app(runner, store, **options)
    sock = bind(host, port)
    server = uvicorn_server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name="hookline-web")
    try:
        thread.start()
        while not server.started and thread.is_alive():
            threading.Event().wait(0.01)
        if not server.started:
            msg = f"the web server on {host}:{sock.getsockname()[1]} did not start"
            raise RuntimeError(msg)
        yield Server(app, host, sock.getsockname()[1])
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
