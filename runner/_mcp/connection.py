"""``Connection``: one server's connection on one event loop, and its one owner task.

The owner task enters the SDK's ``mcp.Client`` (transport, session, handshake), lists the
tools, then waits until asked to close (or cancelled), stops a stdio server itself
(``Child.stop``), and leaves the client in the same task it entered it (anyio's cancel
scopes require it). Calls are the callers' own tasks on the same loop,
as many at once as come; the SDK's session pairs each answer with its request. When the
connection is lost (the server restarted, the stdio process died), the call under way
fails with a transient ``MCPError`` and the owner ends; the next call connects again.
The ``Hub`` decides which loop a connection lives on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import importlib
import inspect
import logging
import os
import sys
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any, Final, TextIO, cast, final

from hooks import ToolResult
from hooks._slots import slot_init
from runner._errors import MCPError, MCPInputRequired, MCPTimeout
from runner._mcp.child import Child
from runner._mcp.listed import Listing, MCPTool, listing
from runner._mcp.results import to_result
from runner._mcp.source import MCPTools

__all__ = ["MODE", "Answer", "Connection"]

logger: Final = logging.getLogger("runner")

_PAGES: Final = 100  # tools/list pages read at most: a server that pages forever cannot hang
MODE: Final = "auto"
"""How a connection agrees on the protocol (the SDK's ``Client(mode=)``): ``"auto"``
asks the server and falls back to the handshake of older sessions."""
_ROUNDS: Final = 10  # tools/call rounds of one call at most (state echoed, listing read again)


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Answer:
    """A human's answer to a question a call asked: ``value`` (``None``: declined), sent
    for the server's ``key`` with the ``state`` it gave."""

    key: str
    state: str | None
    value: Mapping[str, Any] | None


@final
class Connection:
    """One server's connection on one event loop: every coroutine method runs on it."""

    __slots__ = ("_child", "_opened", "_owner", "_stale", "_stop", "_tools", "source")

    def __init__(self, source: MCPTools) -> None:
        self.source: Final = source
        self._tools: Listing = ()
        self._stale = False  # the server said its tool list changed
        self._opened: asyncio.Future[Any] | None = None  # the client, once connected
        self._owner: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._child: Child | None = None  # the stdio server's process, while connected

    def current(self) -> Listing | None:
        """The tools listed, when connected and none changed since (safe from any thread,
        no wait): what a model request offers without awaiting the connection."""
        opened, stop, owner = self._opened, self._stop, self._owner
        if (
            opened is None
            or stop is None
            or owner is None
            or owner.done()  # ended with its loop
            or stop.is_set()
            or self._stale
            or not opened.done()
            or opened.cancelled()
            or opened.exception() is not None
        ):
            return None
        return self._tools

    async def listing(self) -> Listing:
        """The server's tools: connected first if need be, read again if they changed."""
        client = await self._connected(None)
        if self._stale:
            self._stale = False
            stop = self._stop
            try:
                self._tools = listing(self.source, await _list(client))
            except Exception as exc:
                self._stale = True
                raise self._failed(None, exc, stop=stop) from exc
        return self._tools

    async def call(
        self,
        tool: MCPTool,
        args: Mapping[str, Any],
        meta: Mapping[str, Any] | None,
        answer: Answer | None = None,
    ) -> ToolResult:
        """``tool`` called with ``args`` (``meta``: the request's ``_meta``; ``answer``: a
        human's answer to the question the call asked before), within the source's
        deadline, its answer as a ``ToolResult``. A question the server asks (an
        ``InputRequiredResult`` with one form elicitation) raises ``MCPInputRequired``."""
        source = self.source
        client = await self._connected(tool.remote)
        stop = self._stop  # this connection's: a lost one is ended, never its successor
        try:
            # asyncio's own timeout: a third of anyio.fail_after's cost on every call
            async with asyncio.timeout(source.deadline):
                got = await self._send(client, tool.remote, args, meta, answer)
        except TimeoutError as exc:
            raise MCPTimeout(source.name, tool.remote, source.deadline) from exc
        except (MCPError, MCPInputRequired):
            raise
        except Exception as exc:
            raise self._failed(tool.remote, exc, stop=stop) from exc
        return to_result(source.name, tool.remote, got)

    async def _send(
        self,
        client: Any,
        remote: str,
        args: Mapping[str, Any],
        meta: Mapping[str, Any] | None,
        answer: Answer | None,
    ) -> Any:
        """``tools/call`` until the server answers or asks a question: a listing gone
        stale is read again and the call sent once more; a bare request state (no
        question) is echoed back, 10 rounds at most."""
        from mcp import MCPError as SDKError
        from mcp_types import HEADER_MISMATCH, ElicitResult, InputRequiredResult

        responses: dict[str, Any] | None = None
        state = None if answer is None else answer.state
        if answer is not None:
            responses = {
                answer.key: ElicitResult(action="decline")
                if answer.value is None
                else ElicitResult(action="accept", content=dict(answer.value))
            }
        relisted = False
        for _ in range(_ROUNDS):
            try:
                got = await client.session.call_tool(
                    remote,
                    dict(args),
                    meta=None if meta is None else dict(meta),
                    input_responses=responses,
                    request_state=state,
                    allow_input_required=True,
                )
            except SDKError as exc:
                if exc.code != HEADER_MISMATCH or relisted:
                    raise
                relisted = True  # the server's listing moved on: read it, send again
                self._tools = listing(self.source, await _list(client))
                continue
            if not isinstance(got, InputRequiredResult):
                return got
            if got.input_requests:
                raise self._question(remote, got)
            responses, state = None, got.request_state
        raise MCPError(self.source.name, remote, f"no answer after {_ROUNDS} rounds")

    def _question(self, remote: str, asked: Any) -> Exception:
        """The server's question as ``MCPInputRequired``: one form elicitation; any other
        input request is an ``MCPError`` saying what hookline does not answer."""
        from mcp_types import ElicitRequest, ElicitRequestFormParams

        requests: Mapping[str, Any] = asked.input_requests
        name = self.source.name
        if len(requests) != 1:
            problem = f"it asked {len(requests)} questions at once; hookline answers one at a time"
            return MCPError(name, remote, problem)
        ((key, request),) = requests.items()
        params = request.params if isinstance(request, ElicitRequest) else None
        if not isinstance(params, ElicitRequestFormParams):
            what = getattr(request, "method", type(request).__name__)
            problem = f"it asked for {what} (not a form); hookline answers form elicitations only"
            return MCPError(name, remote, problem)
        schema = dict(params.requested_schema)
        state = asked.request_state
        return MCPInputRequired(name, remote, params.message, schema=schema, key=key, state=state)

    def ended(self) -> bool:
        """Whether the owner task has ended, or never started (safe from any thread)."""
        owner = self._owner
        return owner is None or owner.done()

    async def close(self) -> None:
        """End the owner task: the client left, the transport closed."""
        owner, stop = self._owner, self._stop
        if owner is None or stop is None:
            return
        stop.set()
        with contextlib.suppress(BaseException):  # closing: the owner logs how it ended
            await owner

    def abandon(self) -> None:
        """Kill the stdio server (its process group) of an owner that cannot end any more
        (its loop closed with it pending) or did not end in time; safe from any thread."""
        owner, child = self._owner, self._child
        if owner is None or child is None or owner.done():
            return
        self._child = None
        name = self.source.name
        logger.warning(
            "MCP server %r: its connection cannot close; killing process %d", name, child.pid
        )
        child.kill()

    async def _connected(self, tool: str | None) -> Any:
        """The connected client: a new owner task connects when there is none (the first
        call, or the one after the connection was lost)."""
        owner, stop = self._owner, self._stop
        if owner is None or owner.done() or stop is None or stop.is_set():
            self._opened = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            # A context of its own: the owner outlives the run whose call made it.
            own = self._own(self._opened, self._stop)
            self._owner = asyncio.create_task(own, context=contextvars.Context())
        opened = self._opened
        assert opened is not None  # set with the owner
        try:  # connected: no future to wait on
            return opened.result() if opened.done() else await asyncio.shield(opened)
        except MCPError:
            raise
        except Exception as exc:
            raise self._failed(tool, exc, stop=None, connecting=True) from exc

    async def _own(self, opened: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """The connection's whole life, in this one task: connect, list, wait, close."""
        child: Child | None = None
        try:
            async with AsyncExitStack() as stack:
                made, transport = await self._client_for(stack)
                client = await stack.enter_async_context(made)
                self._child = child = Child.of(transport)
                tools = listing(self.source, await _list(client))
                self._tools, self._stale = tools, False
                opened.set_result(client)
                try:
                    await self._until(client, stop)
                finally:  # ended first, so a cancel cutting the SDK's stop short harms nothing
                    if child is not None:
                        await child.stop()
        except BaseException as exc:  # the connection ended: refused, lost, or closed
            if not opened.done():
                opened.set_exception(
                    exc
                    if isinstance(exc, Exception)
                    else MCPError(
                        self.source.name, None, "the connection was cancelled", transient=True
                    )
                )
            if not isinstance(exc, Exception):
                raise
            if not stop.is_set():
                logger.warning("MCP server %r: connection lost: %r", self.source.name, exc)
        finally:  # the SDK stopped it, or it had ended, or it is ended here
            if child is not None:
                child.end(self.source.name)
                if self._child is child:  # a successor's is left alone
                    self._child = None

    async def _until(self, client: Any, stop: asyncio.Event) -> None:
        """Wait for ``stop``; a modern session that lists changes gets them meanwhile."""
        capabilities = client.server_capabilities
        tools = getattr(capabilities, "tools", None)
        if not getattr(tools, "list_changed", False) or client.protocol_version < "2026":
            await stop.wait()
            return
        listener = asyncio.create_task(self._listen(client))
        try:
            await stop.wait()
        finally:
            listener.cancel()
            with contextlib.suppress(BaseException):  # its end: cancelled, or the stream lost
                await listener

    async def _listen(self, client: Any) -> None:
        async with client.listen(tools_list_changed=True) as events:
            async for _ in events:
                self._stale = True

    async def _client_for(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        """The SDK's client for the source's transport (not yet entered), and the stdio
        transport it enters (``None`` on the others)."""
        from mcp import Client, StdioServerParameters, stdio_client

        source = self.source
        options: dict[str, Any] = {
            "message_handler": self._on_message,
            "cache": None,
            "mode": MODE,
        }
        if source.elicit is not None:
            options["elicitation_callback"] = self._elicit
        if source.server is not None:
            return Client(source.server, **options), None
        if source.command is not None:
            params = StdioServerParameters(
                command=source.command[0],
                args=list(source.command[1:]),
                env=None if source.env is None else dict(source.env),
            )
            transport = stdio_client(params, errlog=_errlog())
            return Client(transport, **options), transport
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        assert source.url is not None  # exactly one of the three is given
        headers = None if source.headers is None else dict(source.headers)
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        return Client(streamable_http_client(source.url, http_client=http), **options), None

    async def _elicit(self, context: object, params: object) -> Any:
        """A server's live question, answered by the source's ``elicit``: accepted with
        its answer when that fits the schema, declined on ``None``, cancelled when it
        raised or does not fit (logged)."""
        from mcp_types import ElicitRequestFormParams, ElicitResult

        answer = self.source.elicit
        if answer is None or not isinstance(params, ElicitRequestFormParams):
            return ElicitResult(action="decline")  # a URL elicitation: nothing to show it
        schema = dict(params.requested_schema)
        try:
            if inspect.iscoroutinefunction(answer):
                value = await answer(params.message, schema)
            else:
                value = await asyncio.to_thread(answer, params.message, schema)
            if value is None:
                return ElicitResult(action="decline")
            if inspect.isawaitable(value):
                value = await value
            checked = _fitting(cast("object", value), schema)
        except Exception:
            logger.exception("MCP server %r: elicit failed on %r", self.source.name, params.message)
            return ElicitResult(action="cancel")
        return ElicitResult(action="accept", content=checked)

    async def _on_message(self, message: object) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._stale = True

    def _failed(
        self,
        tool: str | None,
        exc: Exception,
        *,
        stop: asyncio.Event | None,
        connecting: bool = False,
    ) -> MCPError:
        """``exc`` as an ``MCPError``: the server's own error answer is not transient; a
        lost connection is, and ends the owner so the next call connects again."""
        from mcp import MCPError as SDKError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        name = self.source.name
        if isinstance(exc, MCPError):
            return exc
        if isinstance(exc, SDKError) and exc.code != CONNECTION_CLOSED and not connecting:
            transient = exc.code == REQUEST_TIMEOUT
            return MCPError(name, tool, exc.error.message, code=exc.code, transient=transient)
        if stop is not None:  # let its owner end: the next call connects again
            stop.set()
        what = "could not connect" if connecting else "the connection was lost"
        return MCPError(name, tool, f"{what}: {type(exc).__name__}: {exc}", transient=True)


async def _list(client: Any) -> list[Any]:
    """Every tool the server lists, page after page."""
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _errlog() -> TextIO:
    """Where a stdio server's stderr goes: this process's, or the one it started with when
    ``sys.stderr`` was replaced by something with no file (a notebook, a test's capture)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # no stderr at all: the server's is dropped


def _fitting(value: object, schema: Mapping[str, Any]) -> dict[str, Any]:
    """``value`` as the answer ``schema`` asks for, else a ``TypeError`` or the schema's
    ``ValidationError``."""
    if not isinstance(value, Mapping):
        msg = f"an answer must be a mapping (a JSON object), got {type(value).__name__}"
        raise TypeError(msg)
    answer = dict(cast("Mapping[str, Any]", value))
    jsonschema: Any = importlib.import_module("jsonschema")  # comes with the mcp SDK
    jsonschema.validate(answer, dict(schema))
    return answer
