"""``OpenAIChatModel``: any Chat Completions endpoint through the official ``openai`` SDK.

OpenAI itself, and every server that speaks its wire format: vLLM, Ollama (``/v1``),
llama.cpp's ``llama-server``, LM Studio, OpenRouter. The SDK is the optional extra
``hookline[openai]``: importing ``runner`` never imports it; making a model does,
and without the extra fails there with the command that installs it.

``generate`` speaks through the SDK's sync client (``Runner.run``), ``agenerate``
through its async client (``Runner.arun``, with no thread hop); ``stream`` and
``astream`` are their streamed forms (``Runner.stream``). The clients are made on
first use, with the SDK's own retries off: hookline's error hooks own every retry, so
each attempt shows in events and hooks.

The SDK sends each request (``with_streaming_response``) and raises its status errors;
the model reads the body itself, piece by piece (``runner._models.openai.call``): so a
call keeps its total deadline (``ModelTimeout``), a stream is read as server-sent events
(``runner._models.openai.sse``) up to ``[DONE]``, and a body that is no answer is a
``ProviderError`` that says what came. What the SDK raises (``openai.RateLimitError``,
``APIConnectionError``, ``InternalServerError``, ``BadRequestError``, ``APIError`` for
an error event mid-stream...) leaves ``generate`` and the streams unchanged, for
``on_model_error``: a stream raises it before its first delta, or mid-stream. A lost
connection's message names the URL, the model and the cause; a timeout once the
deadline has passed becomes ``ModelTimeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections import Counter
from collections.abc import AsyncGenerator, Generator
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast, final

from hooks import ModelRequest, ModelResponse, ReasoningPart
from runner._events import ModelChunk
from runner._models.deadline import check_deadline, time_left
from runner._models.openai.call import (
    AsyncBody,
    Body,
    Call,
    adrain,
    aread_head,
    drain,
    is_event_stream,
    log_left_out,
    no_event_stream,
    read_head,
)
from runner._models.openai.clients import OnLoop, closing
from runner._models.openai.sse import EventReader
from runner._models.openai.stream import StreamReader
from runner._models.openai.wire import response_format, to_messages, to_tools

if TYPE_CHECKING:
    import httpx2
    import openai

__all__ = ["OpenAIChatModel"]

_INSTALL: Final = "pip install 'hookline[openai]'"

DEFAULT_DEADLINE: Final = 300.0
"""Seconds one model call may take in all, unless ``OpenAIChatModel(..., deadline=)`` says."""
# The adapter sets these itself: stream() and astream() ask for a stream.
_RESERVED: Final = frozenset(("messages", "tools", "stream"))
# Sent when no key is given or set in the environment but a base_url is: self-hosted
# servers (vLLM, Ollama, llama.cpp, LM Studio) run without keys; one that wants a key
# answers 401, which reaches on_model_error as openai.AuthenticationError.
_NO_KEY: Final = "hookline-no-key"


def _require_openai() -> None:
    try:
        import openai  # noqa: F401  # pyright: ignore[reportUnusedImport]  # is the extra here?
    except ImportError as exc:
        msg = f"OpenAIChatModel needs the openai SDK, an optional extra: {_INSTALL}"
        raise ImportError(msg, name="openai") from exc


@final
class OpenAIChatModel:
    """A model behind a Chat Completions endpoint: ``OpenAIChatModel("gpt-4o-mini")``.

    ``client`` / ``async_client``, if given, are used as they are (their own retries
    included). A client the model makes itself has retries off and takes ``base_url``
    and ``api_key``, else those of the one client given, else ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY`` as the SDK reads them; with a base URL but no key anywhere it
    sends the placeholder key ``"hookline-no-key"`` (local servers need none). Every
    other keyword (``temperature``, ``max_completion_tokens``, ``seed``,
    ``tool_choice``, ``extra_body``...) goes into every request. A request's ``output``
    (an agent's ``output_type``) is ``response_format``, a ``json_schema``, strict when
    the schema allows (a server without structured outputs may refuse or ignore it: the
    answer is validated either way).

    Every call has a total ``deadline`` in seconds (300 unless given): the request, the
    wait for the answer and every byte of it, a stream's consumer included, together.
    Past it the call ends with ``runner.ModelTimeout`` (a ``TimeoutError``, so
    ``RetryTransient`` retries it). The SDK's ``timeout``, per read, is at most the time
    the call has left. An answer that is no answer (a body that is not JSON, an HTML
    page, a stream cut off before its end, a server that ignores ``stream: true``) is a
    ``runner.ProviderError`` naming the URL, model, status, content type and first bytes.

    A client the model makes for ``agenerate`` belongs to the event loop it was made
    on (a run on another loop gets its own) and closes when that loop shuts down under
    ``asyncio.run``. ``close()`` / ``await aclose()`` close what the model made.
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
        "model",
    )

    provider: ClassVar[str] = "openai"
    """Who serves the model, as telemetry names it."""
    native_output: ClassVar[bool] = True
    """An agent's ``output_type`` goes as ``response_format`` (a ``json_schema``)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
        deadline: float = DEFAULT_DEADLINE,
        **params: Any,
    ) -> None:
        _require_openai()
        name: object = model  # untyped callers may give anything
        if not isinstance(name, str):
            msg = f"OpenAIChatModel's model must be a str (the model's name), got {name!r:.60}"
            raise TypeError(msg)
        if not name:
            msg = "OpenAIChatModel's model must name a model, got ''"
            raise ValueError(msg)
        reserved = sorted(_RESERVED.intersection(params))
        if reserved:
            msg = (
                f"OpenAIChatModel sets {', '.join(reserved)} itself: the messages and "
                "tools come from the run (stream() and astream() ask for a stream)"
            )
            raise TypeError(msg)
        self.model: Final = model
        self.deadline: Final = check_deadline("OpenAIChatModel's deadline", deadline)
        self._base_url = base_url
        self._api_key = api_key
        self._params: Final = params
        self._given = client
        self._given_async = async_client
        self._client: openai.OpenAI | None = None
        self._async: OnLoop | None = None
        self._lock = threading.Lock()

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the sync client, within the deadline; what the SDK
        raises propagates."""
        client = self._given or self._client or self._sync_client()
        call = self._call(client.base_url)
        with (
            call.guarded(),
            _opened(client, self._request(request, call)) as response,
        ):
            body = bytearray()
            with call.watching(response.http_response):
                for piece in response.iter_bytes():
                    call.check()
                    body += piece
            call.check()
            return call.answer(response.http_response, bytes(body))

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the async client, within the deadline; what the SDK
        raises propagates."""
        client = self._given_async or await self._async_client()
        call = self._call(client.base_url)
        with call.guarded():
            async with (
                call.within(),
                _aopened(client, self._request(request, call)) as response,
            ):
                body = bytearray()
                async for piece in response.iter_bytes():
                    body += piece
        return call.answer(response.http_response, bytes(body))

    def stream(self, request: ModelRequest, /) -> Generator[ModelChunk, None, None]:
        """Answer ``request`` as it is generated, through the sync client: deltas, then
        the whole response (usage from the last chunk).

        The request goes out at the first ``next``; closing the iterator early closes
        the HTTP response. The deadline counts from then to the last chunk, the time the
        consumer takes between chunks included.
        """
        client = self._given or self._client or self._sync_client()
        call = self._call(client.base_url)
        reader = StreamReader()
        with (
            call.guarded(),
            _opened(client, self._request(request, call, stream=True)) as response,
        ):
            http = response.http_response
            pieces = response.iter_bytes()
            if not is_event_stream(http):
                raise no_event_stream(call, http, read_head(pieces, call))
            events = EventReader()
            ended = False
            with call.watching(http):
                for piece in pieces:
                    call.check()
                    for event in events.feed(piece):
                        if event.data.startswith("[DONE]"):
                            ended = True
                            break
                        yield from call.deltas(http, reader, event)
                        call.check()
                    if ended:
                        drain(call, http, pieces)  # the connection back to the pool
                        break
            _check_ended(call, http, reader, ended=ended)
        yield reader.response()

    async def astream(self, request: ModelRequest, /) -> AsyncGenerator[ModelChunk, None]:
        """``stream`` through the async client; ``aclose()`` early closes the response."""
        client = self._given_async or await self._async_client()
        call = self._call(client.base_url)
        reader = StreamReader()
        with call.guarded():
            async with contextlib.AsyncExitStack() as stack:
                async with call.within():
                    response = await stack.enter_async_context(
                        _aopened(client, self._request(request, call, stream=True))
                    )
                http = response.http_response
                pieces = response.iter_bytes()
                stack.push_async_callback(pieces.aclose)
                if not is_event_stream(http):
                    async with call.within():
                        head = await aread_head(pieces)
                    raise no_event_stream(call, http, head)
                events = EventReader()
                ended = False
                while not ended:
                    async with call.within():
                        piece = await anext(pieces, None)
                    if piece is None:
                        break
                    for event in events.feed(piece):
                        if event.data.startswith("[DONE]"):
                            ended = True
                            break
                        for delta in call.deltas(http, reader, event):
                            yield delta
                        call.check()
                if ended:
                    await adrain(call, pieces)  # the connection back to the pool
                _check_ended(call, http, reader, ended=ended)
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
        """A call starting now, to ``base_url``'s chat completions, under the deadline."""
        seconds = min(self.deadline, time_left())  # the runner's deadline, when sooner
        return Call(self.model, f"{str(base_url).rstrip('/')}/chat/completions", seconds)

    def _request(
        self, request: ModelRequest, call: Call, *, stream: bool = False
    ) -> dict[str, Any]:
        """The keywords of one ``create``: model, messages, tools and params (and
        streaming), and a timeout no longer than the time the call has left."""
        body = {"model": self.model, "messages": to_messages(request.messages), **self._params}
        left_out = Counter(
            part.provider
            for message in request.messages
            if message.parts and message.role == "assistant"
            for part in message.parts
            if type(part) is ReasoningPart
        )
        if left_out:
            log_left_out(
                "OpenAIChatModel", self.model, left_out, "Chat Completions takes no reasoning back"
            )
        body["timeout"] = call.timeout(self._params.get("timeout"))
        if request.tools:
            body["tools"] = to_tools(request.tools)
        if request.output is not None:
            body["response_format"] = response_format(request.output)
        if stream:
            # Usage comes only in a last chunk sent when asked for; a caller's other
            # stream options (include_obfuscation...) go along.
            given: dict[str, Any] = self._params.get("stream_options") or {}
            body["stream"] = True
            body["stream_options"] = {**given, "include_usage": True}
        return body

    def _sync_client(self) -> openai.OpenAI:
        import openai

        with self._lock:
            if self._client is None:
                self._client = openai.OpenAI(**self._settings(), max_retries=0)
            return self._client

    async def _async_client(self) -> openai.AsyncOpenAI:
        """The client made on the running loop; made now if there is none."""
        loop = asyncio.get_running_loop()
        made = self._async
        if made is not None and made.loop is loop:
            return made.client
        import openai

        client = openai.AsyncOpenAI(**self._settings(), max_retries=0)
        keeper = closing(client)
        await anext(keeper)  # runs to its yield: nothing suspends between check and set
        self._async = OnLoop(loop, client, keeper)
        return client

    def _settings(self) -> dict[str, Any]:
        """The base URL and key for a client the model makes: given, the other client's,
        or the environment's."""
        base_url, api_key = self._base_url, self._api_key
        other = self._given or self._given_async
        if other is not None:
            base_url = base_url or str(other.base_url)
            api_key = api_key or other.api_key
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        api_key = api_key or os.environ.get("OPENAI_API_KEY") or None
        if api_key is None and base_url is not None:
            api_key = _NO_KEY
        return {"base_url": base_url, "api_key": api_key}

    def __repr__(self) -> str:
        where = f", base_url={self._base_url!r}" if self._base_url else ""
        return f"OpenAIChatModel({self.model!r}{where})"


def _opened(client: openai.OpenAI, params: dict[str, Any]) -> AbstractContextManager[Body]:
    """The request sent through the sync client, its body left for the call to read."""
    return cast(
        "AbstractContextManager[Body]",
        client.chat.completions.with_streaming_response.create(**params),
    )


def _aopened(
    client: openai.AsyncOpenAI, params: dict[str, Any]
) -> AbstractAsyncContextManager[AsyncBody]:
    """The request sent through the async client, its body left for the call to read."""
    return cast(
        "AbstractAsyncContextManager[AsyncBody]",
        client.chat.completions.with_streaming_response.create(**params),
    )


def _check_ended(
    call: Call, response: httpx2.Response, reader: StreamReader, *, ended: bool
) -> None:
    """A stream that ended with neither ``[DONE]`` nor a finish reason was cut off (worth a
    retry); one that ended and held no choice has no answer (not)."""
    if not ended and not reader.finished:
        raise call.error(
            "the stream ended before the answer did: no finish_reason and no [DONE]",
            response,
            transient=True,
        )
    if not reader.answered:
        raise call.error(f"the stream {reader.completion_id!r} held no choices", response)
