"""``AnthropicModel``: Claude through Anthropic's Messages API and the official ``anthropic`` SDK.

The SDK is the optional extra ``hookline[anthropic]``: importing ``runner`` never
imports it; making a model does, and without the extra fails there with the command
that installs it.

``generate`` speaks through the SDK's sync client (``Runner.run``), ``agenerate``
through its async client (``Runner.arun``, with no thread hop); ``stream`` and
``astream`` are their streamed forms (``Runner.stream``). The clients are made on
first use, with the SDK's own retries off: hookline's error hooks own every retry.

The SDK sends each ``POST /v1/messages`` (``with_streaming_response``) and raises its
status errors (``anthropic.RateLimitError``, ``OverloadedError`` for 529,
``InternalServerError``, ``APIConnectionError``, ``APITimeoutError``...), which reach
``on_model_error`` as themselves. The model reads the body itself, piece by piece, under
the call's total deadline (``runner._models.openai.call.Call``, provider-neutral): past
it, ``ModelTimeout``. A stream is read as server-sent events up to ``message_stop``; an
``error`` event mid-stream is raised as the SDK raises it (``anthropic.APIStatusError``
with the event's body; ``is_transient`` reads its ``error.type``). A body that is no
answer is a ``ProviderError`` that says what came.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import threading
from collections.abc import AsyncGenerator, Generator
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast, final

from hooks import ModelRequest, ModelResponse
from runner._events import ModelChunk
from runner._models.anthropic.stream import StreamReader
from runner._models.anthropic.wire import from_message, output_format, to_tools, to_wire
from runner._models.deadline import check_deadline, time_left
from runner._models.openai.call import (
    AsyncBody,
    Body,
    Call,
    aread_head,
    is_event_stream,
    log_left_out,
    no_event_stream,
    read_head,
)
from runner._models.openai.sse import Event, EventReader

if TYPE_CHECKING:
    import anthropic
    import httpx2

    from runner._events import TextDelta, ToolCallDelta

__all__ = ["AnthropicModel"]


_INSTALL: Final = "pip install 'hookline[anthropic]'"
DEFAULT_DEADLINE: Final = 300.0
"""Seconds one model call may take in all, unless ``AnthropicModel(..., deadline=)`` says."""
DEFAULT_MAX_TOKENS: Final = 4096
# The adapter sets these itself: the conversation and tools come from the run, the
# instruction is `system`, stream() and astream() ask for a stream.
_RESERVED: Final = frozenset(("messages", "tools", "system", "stream", "model"))


def _require_anthropic() -> None:
    try:
        import anthropic  # noqa: F401  # pyright: ignore[reportUnusedImport]  # is the extra here?
    except ImportError as exc:
        msg = f"AnthropicModel needs the anthropic SDK, an optional extra: {_INSTALL}"
        raise ImportError(msg, name="anthropic") from exc


@final
class _OnLoop:
    """An async client and the loop it belongs to; ``keeper`` closes it with the loop."""

    __slots__ = ("client", "keeper", "loop")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        client: anthropic.AsyncAnthropic,
        keeper: AsyncGenerator[None, None],
    ) -> None:
        self.loop: Final = loop
        self.client: Final = client
        self.keeper: Final = keeper


async def _closing(client: anthropic.AsyncAnthropic) -> AsyncGenerator[None, None]:
    """Suspended at its ``yield`` for the client's life, closes it when finalized (as
    ``asyncio.run`` finalizes a loop's suspended async generators before closing it)."""
    try:
        yield
    finally:
        await client.close()


@final
class AnthropicModel:
    """A Claude model behind the Messages API: ``AnthropicModel("claude-sonnet-5-5")``.

    ``client`` / ``async_client``, if given, are used as they are (their own retries
    included). A client the model makes itself has retries off and takes ``base_url``
    and ``api_key``, else those of the one client given, else what the SDK reads
    (``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``, its other credentials). Every request
    asks for at most ``max_tokens`` tokens (4096 unless given; the API requires a bound);
    every other keyword (``thinking``, ``tool_choice``, ``stop_sequences``,
    ``metadata``, ``output_config``, ``extra_headers``, ``extra_body``...) goes into every
    request; one the SDK's ``messages.create`` does not take is a ``TypeError`` here. A
    request's ``output`` (an agent's ``output_type``) is ``output_config.format``, a
    ``json_schema`` (Claude's structured outputs), beside the tools.

    Every call has a total ``deadline`` in seconds (300 unless given), the sooner of it
    and the runner's ``time_left()``: the request, the wait for the answer and every byte
    of it, a stream's consumer included. Past it the call ends with
    ``runner.ModelTimeout``. An answer that is no answer is a ``runner.ProviderError``
    naming the URL, model, status, content type and first bytes. ``close()`` /
    ``await aclose()`` close the clients the model made.
    """

    __slots__ = (
        "_api_key",
        "_async",
        "_base_url",
        "_client",
        "_given",
        "_given_async",
        "_lock",
        "_params",
        "deadline",
        "max_tokens",
        "model",
    )

    provider: ClassVar[str] = "anthropic"
    """Who serves the model, as telemetry names it."""
    native_output: ClassVar[bool] = True
    """An agent's ``output_type`` goes as ``output_config.format`` (a ``json_schema``)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: anthropic.Anthropic | None = None,
        async_client: anthropic.AsyncAnthropic | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        deadline: float = DEFAULT_DEADLINE,
        **params: Any,
    ) -> None:
        _require_anthropic()
        name: object = model  # untyped callers may give anything
        if not isinstance(name, str):
            msg = f"AnthropicModel's model must be a str (the model's name), got {name!r:.60}"
            raise TypeError(msg)
        if not name:
            msg = "AnthropicModel's model must name a model, got ''"
            raise ValueError(msg)
        bound: object = max_tokens
        if type(bound) is not int:
            msg = f"AnthropicModel's max_tokens must be an int >= 1, got {bound!r:.60}"
            raise TypeError(msg)
        if bound < 1:
            msg = f"AnthropicModel's max_tokens must be an int >= 1, got {bound!r}"
            raise ValueError(msg)
        reserved = sorted(_RESERVED.intersection(params))
        if reserved:
            msg = (
                f"AnthropicModel sets {', '.join(reserved)} itself: the messages, the "
                "instruction (system) and the tools come from the run, the model is the "
                "first argument, and stream() and astream() ask for a stream"
            )
            raise TypeError(msg)
        _check_params(params)
        self.model: Final = model
        self.max_tokens: Final = max_tokens
        self.deadline: Final = check_deadline("AnthropicModel's deadline", deadline)
        self._base_url = base_url
        self._api_key = api_key
        self._params: Final = params
        self._given = client
        self._given_async = async_client
        self._client: anthropic.Anthropic | None = None
        self._async: _OnLoop | None = None
        self._lock = threading.Lock()

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the sync client, within the deadline; what the SDK
        raises propagates."""
        client = self._given or self._client or self._sync_client()
        call = self._call(client.base_url)
        params = self._request(request, call)
        with call.guarded(), _opened(client, params) as response:
            body = bytearray()
            with call.watching(response.http_response):
                for piece in response.iter_bytes():
                    call.check()
                    body += piece
            call.check()
            return _answer(call, response.http_response, bytes(body))

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the async client, within the deadline; what the SDK
        raises propagates."""
        client = self._given_async or await self._async_client()
        call = self._call(client.base_url)
        params = self._request(request, call)
        with call.guarded():
            async with call.within(), _aopened(client, params) as response:
                body = bytearray()
                async for piece in response.iter_bytes():
                    body += piece
        return _answer(call, response.http_response, bytes(body))

    def stream(self, request: ModelRequest, /) -> Generator[ModelChunk, None, None]:
        """Answer ``request`` as it is generated, through the sync client: deltas, then
        the whole response.

        The request goes out at the first ``next``; closing the iterator early closes
        the HTTP response. The deadline counts from then to the last event, the time the
        consumer takes between deltas included.
        """
        client = self._given or self._client or self._sync_client()
        call = self._call(client.base_url)
        params = self._request(request, call, stream=True)
        reader = StreamReader()
        with call.guarded(), _opened(client, params) as response:
            http = response.http_response
            pieces = response.iter_bytes()
            if not is_event_stream(http):
                raise no_event_stream(call, http, read_head(pieces, call))
            events = EventReader()
            with call.watching(http):
                for piece in pieces:
                    call.check()
                    for event in events.feed(piece):
                        yield from _deltas(call, http, reader, event)
                        call.check()
                        if reader.ended:
                            break
                    if reader.ended:
                        break
            _check_ended(call, http, reader)
        yield reader.response()

    async def astream(self, request: ModelRequest, /) -> AsyncGenerator[ModelChunk, None]:
        """``stream`` through the async client; ``aclose()`` early closes the response."""
        client = self._given_async or await self._async_client()
        call = self._call(client.base_url)
        params = self._request(request, call, stream=True)
        reader = StreamReader()
        with call.guarded():
            async with contextlib.AsyncExitStack() as stack:
                async with call.within():
                    response = await stack.enter_async_context(_aopened(client, params))
                http = response.http_response
                pieces = response.iter_bytes()
                stack.push_async_callback(pieces.aclose)
                if not is_event_stream(http):
                    async with call.within():
                        head = await aread_head(pieces)
                    raise no_event_stream(call, http, head)
                events = EventReader()
                while True:
                    async with call.within():
                        piece = await anext(pieces, None)
                    if piece is None:
                        break
                    for event in events.feed(piece):
                        for delta in _deltas(call, http, reader, event):
                            yield delta
                        call.check()
                        if reader.ended:
                            break
                    if reader.ended:
                        break
                _check_ended(call, http, reader)
        yield reader.response()

    def close(self) -> None:
        """Close the sync client this model made (a given one is the caller's to close)."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        """Close the async client this model made on the running loop, if any."""
        made, self._async = self._async, None
        if made is not None and made.loop is asyncio.get_running_loop():
            await made.keeper.aclose()

    def _call(self, base_url: object) -> Call:
        """A call starting now, to ``base_url``'s messages endpoint, under the deadline."""
        seconds = min(self.deadline, time_left())  # the runner's deadline, when sooner
        return Call(self.model, f"{str(base_url).rstrip('/')}/v1/messages", seconds)

    def _request(
        self, request: ModelRequest, call: Call, *, stream: bool = False
    ) -> dict[str, Any]:
        """The keywords of one ``messages.create``: model, max_tokens, system, messages,
        tools and params (and streaming), and a timeout no longer than the call has left.
        Another provider's reasoning left out is logged here, once per call."""
        wire = to_wire(request.messages)
        if wire.left_out:
            log_left_out(
                "AnthropicModel",
                self.model,
                wire.left_out,
                "the Messages API takes back only Anthropic's own thinking blocks",
            )
        body: dict[str, Any] = {"model": self.model, "max_tokens": self.max_tokens}
        if wire.system is not None:
            body["system"] = wire.system
        body["messages"] = wire.messages
        if request.tools:
            body["tools"] = to_tools(request.tools)
        body.update(self._params)
        if request.output is not None:  # beside the caller's other output options (effort)
            given: dict[str, Any] = self._params.get("output_config") or {}
            body["output_config"] = {**given, "format": output_format(request.output)}
        body["timeout"] = call.timeout(self._params.get("timeout"))
        if stream:
            body["stream"] = True
        return body

    def _sync_client(self) -> anthropic.Anthropic:
        import anthropic

        with self._lock:
            if self._client is None:
                self._client = anthropic.Anthropic(**self._settings(), max_retries=0)
            return self._client

    async def _async_client(self) -> anthropic.AsyncAnthropic:
        """The client made on the running loop; made now if there is none."""
        loop = asyncio.get_running_loop()
        made = self._async
        if made is not None and made.loop is loop:
            return made.client
        import anthropic

        client = anthropic.AsyncAnthropic(**self._settings(), max_retries=0)
        keeper = _closing(client)
        await anext(keeper)  # runs to its yield: nothing suspends between check and set
        self._async = _OnLoop(loop, client, keeper)
        return client

    def _settings(self) -> dict[str, Any]:
        """The base URL and key for a client the model makes: given, else the other
        client's; what is still ``None`` the SDK reads from the environment."""
        base_url, api_key = self._base_url, self._api_key
        other = self._given or self._given_async
        if other is not None:
            base_url = base_url or str(other.base_url)
            api_key = api_key or other.api_key
        settings: dict[str, Any] = {}
        if base_url is not None:
            settings["base_url"] = base_url
        if api_key is not None:
            settings["api_key"] = api_key
        return settings

    def __repr__(self) -> str:
        where = f", base_url={self._base_url!r}" if self._base_url else ""
        return f"AnthropicModel({self.model!r}{where})"


def _check_params(params: dict[str, Any]) -> None:
    """Every keyword must be one the SDK's ``messages.create`` takes (it refuses others at
    call time): said now, with what to use instead."""
    from anthropic.resources import Messages

    known = frozenset(inspect.signature(Messages.create).parameters) - {"self"}
    unknown = sorted(set(params) - known)
    if unknown:
        msg = (
            f"AnthropicModel: the anthropic SDK's messages.create takes no "
            f"{', '.join(unknown)}; a field the API takes beyond the SDK goes in "
            "extra_body={...}"
        )
        raise TypeError(msg)


def _opened(client: anthropic.Anthropic, params: dict[str, Any]) -> AbstractContextManager[Body]:
    """The request sent through the sync client, its body left for the call to read."""
    return cast(
        "AbstractContextManager[Body]",
        client.messages.with_streaming_response.create(**params),
    )


def _aopened(
    client: anthropic.AsyncAnthropic, params: dict[str, Any]
) -> AbstractAsyncContextManager[AsyncBody]:
    """The request sent through the async client, its body left for the call to read."""
    return cast(
        "AbstractAsyncContextManager[AsyncBody]",
        client.messages.with_streaming_response.create(**params),
    )


def _answer(call: Call, response: httpx2.Response, body: bytes) -> ModelResponse:
    """``body`` as the model's answer, or a ``ProviderError`` saying why it is none."""
    data = _json(call, response, body, "the body")
    if data is None or data.get("type") != "message":
        raise call.error("the body is no message (its type is not 'message')", response, body)
    try:
        return from_message(data)
    except (TypeError, ValueError) as error:  # a field of the wrong shape
        raise call.error(f"the body is no message: {error}", response, body) from error


def _deltas(
    call: Call, response: httpx2.Response, reader: StreamReader, event: Event
) -> list[TextDelta | ToolCallDelta]:
    """What ``event`` adds to the answer, as deltas; an ``error`` event raises what the
    SDK raises for it."""
    data = _json(call, response, event.data.encode("utf-8", "replace"), "an event's data")
    if data is None:
        raise call.error("an event's data is no JSON object", response, event.data)
    if event.name == "error" or data.get("type") == "error":
        raise _stream_error(response, data)
    try:
        return reader.read(data)
    except (TypeError, ValueError) as error:
        raise call.error(f"an event is no stream event: {error}", response, event.data) from error


def _stream_error(response: httpx2.Response, body: dict[str, Any]) -> anthropic.APIStatusError:
    """An ``error`` event as the SDK raises it: ``APIStatusError`` with the event's body
    (the response's status, 200, says nothing; its ``error.type`` says what failed)."""
    import anthropic

    return anthropic.APIStatusError(f"{body}", response=response, body=body)


def _json(call: Call, response: httpx2.Response, body: bytes, what: str) -> dict[str, Any] | None:
    """``body`` parsed (``Call.parse``): the object it holds, ``None`` if it holds none."""
    value = call.parse(response, body, what)
    return cast("dict[str, Any]", value) if isinstance(value, dict) else None


def _check_ended(call: Call, response: httpx2.Response, reader: StreamReader) -> None:
    """A stream that ended before ``message_stop`` was cut off (worth a retry); one that
    ended with no ``message_start`` held no message (not)."""
    if not reader.ended:
        raise call.error(
            "the stream ended before the answer did: no message_stop", response, transient=True
        )
    if not reader.started:
        raise call.error("the stream held no message_start, so no message", response)
