"""``runner.web.__main__`` in this process: what ``--agent`` loads, and the command's
serving, its foreground server replaced by one the test drives; ``runner.web._serve``'s
socket and address edges."""

from __future__ import annotations

import asyncio
import socket
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

import runner.web.__main__ as command
from examples.web_inbox import make_runner
from runner import Runner, SQLiteSessionStore
from runner.web import inbox_app
from runner.web._serve import Server, bind, serve_in_thread

MODULE = """
from runner import Agent, Runner, ScriptedModel

agent = Agent("plain", ScriptedModel(["hi"]))
runner = Runner(Agent("ready", ScriptedModel(["hi"])))
number = 3
"""


@pytest.fixture
def agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The name of an importable module holding an Agent, a Runner and a number."""
    name = f"web_agents_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_an_agent_is_loaded_as_a_factory_of_runners_over_the_store(
    agents: str, tmp_path: Path
) -> None:
    """``module:agent`` naming an Agent loads a function making a Runner of it on a store."""
    source = command.load_source(f"{agents}:agent")
    assert not isinstance(source, Runner)
    with SQLiteSessionStore(tmp_path / "s.db") as store:
        made = source(store)
        assert isinstance(made, Runner)
        assert made.agent.name == "plain"
        assert made.sessions is store


def test_a_runner_and_a_factory_are_loaded_as_they_are(agents: str) -> None:
    """``module:runner`` is that Runner; ``module:function`` that function."""
    loaded = command.load_source(f"{agents}:runner")
    assert isinstance(loaded, Runner)
    assert loaded.agent.name == "ready"
    assert command.load_source("examples.web_inbox:make_runner") is make_runner


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("{module}:number", "names no Agent, Runner or function making a Runner"),
        ("{module}:missing", "names no Agent, Runner or function making a Runner"),
        ("{module}", "--agent must be module.path:name"),
        (":agent", "--agent must be module.path:name"),
        ("{module}:not-a-name", "--agent must be module.path:name"),
    ],
)
def test_an_agent_spec_naming_nothing_servable_ends_the_command(
    agents: str, spec: str, said: str
) -> None:
    """A spec without a module or a name, or naming a non-callable or nothing, is refused."""
    with pytest.raises(SystemExit, match=said):
        command.load_source(spec.format(module=agents))


class Foreground:
    """Stands in for uvicorn's server: asks the app through the socket, then returns
    (or raises ``failing``)."""

    def __init__(self, app: Any, failing: BaseException | None) -> None:
        self.app = app
        self.failing = failing
        self.sockets: list[socket.socket] = []
        self.answers: list[tuple[int, Any]] = []

    def run(self, sockets: list[socket.socket]) -> None:
        self.sockets = sockets
        (sock,) = sockets
        assert sock.getsockname()[1] != 0  # bound, listening
        self.answers = asyncio.run(self.ask())
        if self.failing is not None:
            raise self.failing

    async def ask(self) -> list[tuple[int, Any]]:
        """The inbox's listing and the AG-UI endpoint's answer to an empty input."""
        transport = httpx.ASGITransport(app=self.app)
        headers = {"Authorization": f"Bearer {self.app.token}"}
        async with httpx.AsyncClient(
            transport=transport, base_url="http://127.0.0.1", headers=headers
        ) as client:
            listed = await client.get("/api/paused")
            agui = await client.post("/agui/", content=b"{}")
        return [(listed.status_code, listed.json()), (agui.status_code, agui.json())]


def serving(
    monkeypatch: pytest.MonkeyPatch, failing: BaseException | None = None
) -> list[Foreground]:
    """Replace the command's foreground server; the ones made are listed."""
    made: list[Foreground] = []

    def fake(app: Any) -> Foreground:
        made.append(Foreground(app, failing))
        return made[-1]

    monkeypatch.setattr(command, "uvicorn_server", fake)
    return made


def test_the_command_prints_the_address_serves_the_app_and_closes_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``main`` prints the address with a token, serves the inbox (AG-UI behind it, the
    host it binds allowed) on the socket it bound, and closes socket and runner after."""
    made = serving(monkeypatch)
    store = tmp_path / "s.db"
    command.main(
        ["--store", str(store), "--agent", "examples.web_inbox:make_runner", "--host", "127.0.0.1"]
    )
    (server,) = made
    printed = capsys.readouterr().out.strip()
    assert server.sockets[0].fileno() == -1  # closed
    assert printed.startswith("hookline inbox: http://127.0.0.1:")
    assert "?token=" in printed
    listed, agui = server.answers
    assert listed == (200, {"runs": [], "content": False})  # no --capture
    assert agui[0] == 422
    assert "threadId" in agui[1]["error"]
    assert server.app.token is not None
    assert server.app.token in printed
    assert server.app.runner.closed


def test_the_command_serves_content_with_capture_and_closes_when_serving_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--capture`` serves run content; a server that stops with an error (Ctrl-C) still
    has its socket closed, the error going on."""
    made = serving(monkeypatch, KeyboardInterrupt())
    args = ["--store", str(tmp_path / "s.db"), "--agent", "examples.web_inbox:make_runner"]
    with pytest.raises(KeyboardInterrupt):
        command.main([*args, "--capture"])
    (server,) = made
    assert server.answers[0] == (200, {"runs": [], "content": True})
    assert server.sockets[0].fileno() == -1
    assert server.app.runner.closed
    assert capsys.readouterr().out.startswith("hookline inbox: http://127.0.0.1:")


def test_the_command_needs_a_store_and_an_agent(capsys: pytest.CaptureFixture[str]) -> None:
    """Without ``--store`` or ``--agent``, argparse ends the command naming them."""
    with pytest.raises(SystemExit):
        command.main(["--agent", "examples.web_inbox:make_runner"])
    assert "--store" in capsys.readouterr().err


# -- _serve ----------------------------------------------------------------------------


def test_bind_closes_its_socket_when_the_address_is_taken() -> None:
    """Binding a port a listening socket holds is the OSError, the new socket closed."""
    taken = bind("127.0.0.1", 0)
    try:
        port = taken.getsockname()[1]
        opened: list[socket.socket] = []
        real = socket.socket

        def recording(*args: Any) -> socket.socket:
            opened.append(real(*args))
            return opened[-1]

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(socket, "socket", recording)
            with pytest.raises(OSError, match="in use"):
                bind("127.0.0.1", port)
        (sock,) = opened
        assert sock.fileno() == -1
    finally:
        taken.close()


def test_an_ipv6_server_address_brackets_its_host(tmp_path: Path) -> None:
    """A host with colons is written in brackets in the server's addresses."""
    with SQLiteSessionStore(tmp_path / "s.db") as store:
        app = inbox_app(make_runner, store, token="t" * 32)
        server = Server(app, "::1", 8123)
        assert server.url("/x") == "http://[::1]:8123/x"
        assert server.address == "http://[::1]:8123/?token=" + "t" * 32
        app.runner.close()


def test_a_server_that_cannot_start_is_an_error_naming_its_address(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread whose server ends before it started is a RuntimeError naming host and port."""
    import uvicorn

    def ends(self: uvicorn.Server, sockets: Any = None) -> None:
        return None  # returns at once, never started

    monkeypatch.setattr(uvicorn.Server, "run", ends)
    said = r"the web server on 127\.0\.0\.1:\d+ did not start"
    with (
        SQLiteSessionStore(tmp_path / "s.db") as store,
        pytest.raises(RuntimeError, match=said),
        serve_in_thread(make_runner, store),
    ):
        pass  # pragma: no cover
