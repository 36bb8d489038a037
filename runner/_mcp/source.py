"""``MCPTools``: a server an agent takes its tools from, by URL, command or in-process object."""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, NoReturn, TypeAlias, cast, final

from runner._checks import got, is_list
from runner._models.deadline import check_deadline
from runner._tools.tools import check_tool_name

__all__ = ["INSTALL", "Elicit", "MCPTools", "require_mcp"]

INSTALL: Final = "pip install 'hookline[mcp]'"

Elicit: TypeAlias = Callable[
    [str, Mapping[str, Any]],
    "Awaitable[Mapping[str, Any] | None] | Mapping[str, Any] | None",
]
"""An in-process answer to a server's live question: ``(message, schema) -> answer``
(``None`` declines), plain or ``async def``."""


def require_mcp(what: str) -> None:
    """Raise ``ImportError`` naming the extra unless the ``mcp`` SDK is installed."""
    try:
        import mcp  # noqa: F401  # pyright: ignore[reportUnusedImport]  # is the extra here?
    except ImportError as exc:
        msg = f"{what} needs the mcp SDK, an optional extra: {INSTALL}"
        raise ImportError(msg, name="mcp") from exc


@final
class MCPTools:
    """The tools of one MCP server, passed among an agent's tools:
    ``Agent("ops", model, tools=[add, MCPTools("fs", command=["fs-server"])])``.

    Exactly one of ``url`` (a streamable HTTP endpoint; ``headers`` go with each of its
    requests), ``command`` (an argv list started as a stdio subprocess; ``env`` its
    environment, the SDK's safe default when ``None``) or ``server`` (an in-process
    ``mcp`` server object: a ``mcp.server.mcpserver.MCPServer`` or a lowlevel
    ``mcp.server.lowlevel.Server``, for tests and embedding).

    A runner connects on first use (the first model request of an agent that has it):
    an async run on its own event loop (the connection ends with that loop, or when the
    runner closes), a sync run on a loop thread of the runner's (until the runner
    closes); the tool list is read once per connection and read
    again after the server says it changed (``notifications/tools/list_changed``). With
    ``prefix`` the model and the hooks see each tool as ``"{name}_{tool}"``; a listed
    name that breaks the providers' rule (``^[A-Za-z0-9_-]{1,64}$``) is shown with
    ``_`` for each character it may not have, and one still too long, or clashing with
    another tool of the agent, is left out (a warning on the ``runner`` logger says
    so). ``deadline`` bounds each call, in seconds: past it the call fails with
    ``MCPTimeout``. ``name`` is an identifier and a valid tool name; every input is
    checked here.

    ``elicit`` answers, in this process, a question a server asks on the live connection
    (an ``elicitation/create`` request: servers on sessions older than 2026-07-28, which
    cannot wait for a resume): ``elicit(message, schema)`` (sync, run on a worker
    thread, or ``async def``) returns the answer (a mapping, checked against the schema)
    or ``None`` to decline. Without it such a question is refused. A 2026-07-28 server's
    question pauses the run instead (a request of kind ``"input"``; ``Respond`` answers).

    Immutable, and compared by identity: one object is one connection per runner,
    however many agents list it.
    """

    __slots__ = (
        "command",
        "deadline",
        "elicit",
        "env",
        "headers",
        "name",
        "prefix",
        "server",
        "url",
    )

    def __init__(
        self,
        name: str,
        *,
        url: str | None = None,
        command: Sequence[str] | None = None,
        server: object = None,
        env: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        prefix: bool = True,
        deadline: float = 60.0,
        elicit: Elicit | None = None,
    ) -> None:
        require_mcp("MCPTools")
        given_name: object = name  # untyped callers may pass anything
        if not isinstance(given_name, str) or not given_name.isidentifier():
            _refuse(name, "name", "an identifier (it names its tools and its spans)")
        check_tool_name(name, "MCPTools name")
        given = [
            field
            for field, value in (("url", url), ("command", command), ("server", server))
            if value is not None
        ]
        if len(given) != 1:
            msg = (
                f"MCPTools {name!r} needs exactly one of url=, command= or server=, "
                f"got {', '.join(given) or 'none'}"
            )
            raise ValueError(msg)
        given_url: object = url
        if given_url is not None and (
            not isinstance(given_url, str) or not given_url.startswith(("http://", "https://"))
        ):
            _refuse(url, f"MCPTools {name!r} url", "an http:// or https:// URL (streamable HTTP)")
        argv: tuple[str, ...] | None = None
        if command is not None:
            if not is_list(command) or not command or not all(isinstance(a, str) for a in command):
                _refuse(command, f"MCPTools {name!r} command", "a non-empty list of str (argv)")
            argv = tuple(str(arg) for arg in command)  # each one a str, checked above
        if server is not None:
            _check_server(name, server)
        if env is not None and command is None:
            msg = f"MCPTools {name!r}: env= is the stdio process's environment; pass command= too"
            raise ValueError(msg)
        if headers is not None and url is None:
            msg = f"MCPTools {name!r}: headers= go with HTTP requests; pass url= too"
            raise ValueError(msg)
        self.name: Final = name
        self.url: Final = url
        self.command: Final = argv
        self.server: Final[Any] = server
        self.env: Final = None if env is None else _strings(name, "env", env)
        self.headers: Final = None if headers is None else _strings(name, "headers", headers)
        if type(prefix) is not bool:
            _refuse(prefix, f"MCPTools {name!r} prefix", "True or False")
        self.prefix: Final = prefix
        self.deadline: Final = check_deadline(f"MCPTools {name!r} deadline", deadline)
        if elicit is not None and not callable(elicit):
            _refuse(elicit, f"MCPTools {name!r} elicit", "a function (message, schema) or None")
        self.elicit: Final = elicit

    @property
    def transport(self) -> str:
        """How the server is reached: ``"http"``, ``"stdio"`` or ``"memory"``."""
        if self.url is not None:
            return "http"
        return "stdio" if self.command is not None else "memory"

    def __setattr__(self, key: str, value: object) -> None:
        try:
            object.__getattribute__(self, key)
        except AttributeError:
            if key in MCPTools.__slots__:
                object.__setattr__(self, key, value)
                return
        msg = f"MCPTools is immutable: cannot set {key!r}"
        raise AttributeError(msg, name=key, obj=self)

    def __repr__(self) -> str:
        where = self.url or (" ".join(self.command) if self.command else type(self.server).__name__)
        return f"MCPTools({self.name!r}, {self.transport}: {where!s:.60})"


def _check_server(name: str, server: object) -> None:
    from mcp.server.lowlevel import Server
    from mcp.server.mcpserver import MCPServer

    if not isinstance(server, Server | MCPServer):
        _refuse(
            server,
            f"MCPTools {name!r} server",
            "an in-process mcp server (mcp.server.mcpserver.MCPServer or lowlevel Server)",
        )


def _strings(name: str, field: str, values: object) -> Mapping[str, str]:
    """``values`` as a read-only copy, if it maps str to str; else a ``TypeError``."""
    given: object = values
    if not isinstance(values, Mapping):
        _refuse(given, f"MCPTools {name!r} {field}", "a mapping of str to str")
    pairs = cast("Mapping[object, object]", values).items()
    copied = {key: value for key, value in pairs if isinstance(key, str) and isinstance(value, str)}
    if len(copied) != len(pairs):
        _refuse(given, f"MCPTools {name!r} {field}", "a mapping of str to str")
    return types.MappingProxyType(copied)


def _refuse(value: object, what: str, expected: str) -> NoReturn:
    if isinstance(value, str) or value is None:
        msg = f"{what} must be {expected}, got {value!r:.60}"
        raise ValueError(msg)
    msg = f"{what} must be {expected}, got {got(value)}"
    raise TypeError(msg)
