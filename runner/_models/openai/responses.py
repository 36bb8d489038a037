"""``OpenAIResponsesModel``: OpenAI's Responses API (``POST {base_url}/responses``) through
the official ``openai`` SDK's ``client.responses``.

The API OpenAI's current models need for function tools together with reasoning. The
SDK is the optional extra ``hookline[openai]``: importing ``runner`` never imports it;
making a model does, and without the extra fails there with the command that installs it.

Stateless by default: each request carries the whole conversation in ``input``, with
``store: false`` and ``include: ["reasoning.encrypted_content"]``, so the reasoning items
a response holds come back encrypted, ride on the assistant message as
``ReasoningPart("openai", ...)`` and go back, unchanged, in the next request's
``input`` before the calls and text they led to (``runner._models.openai.responses_wire``
says how every message is written). Reasoning parts of another provider are left out of
what is sent, and an INFO record on the ``runner`` logger says how many, per call.

As ``OpenAIChatModel``: ``generate`` through the SDK's sync client, ``agenerate`` through
its async client, ``stream`` / ``astream`` their streamed forms; clients the model makes
have the SDK's retries off (hookline's error hooks own every retry); the SDK sends each
request and raises its status errors, the model reads the body itself under the call's
total deadline (``runner._models.openai.call.Call``): ``ModelTimeout`` past it, a
``ProviderError`` naming the URL, model, status, content type and first bytes for a
body that is no response. A streamed answer ends with ``response.completed`` or
``response.incomplete``; a stream that ends before is a transient ``ProviderError``.
A ``response.failed`` event (or a body whose ``status`` is ``failed``) and an ``error``
event raise ``openai.APIError`` with the error as its ``body`` (its ``code`` tells
``RetryTransient`` whether it is worth a retry); what the SDK raises passes unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import AsyncGenerator, Generator, Mapping
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Final, NoReturn, cast, final

from hooks import ModelRequest, ModelResponse
from runner._events import ModelChunk, TextDelta, ToolCallDelta
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
from runner._models.openai.responses_stream import ResponsesStreamReader
from runner._models.openai.responses_wire import (
    from_response,
    output_format,
    to_input,
    to_tools,
)
from runner._models.openai.sse import Event, EventReader

if TYPE_CHECKING:
    import httpx2
    import openai

__all__ = ["OpenAIResponsesModel"]

_INSTALL: Final = "pip install 'hookline[openai]'"
DEFAULT_DEADLINE: Final = 300.0
"""Seconds one model call may take in all, unless ``OpenAIResponsesModel(..., deadline=)`` says."""
# The adapter sets these itself: the conversation comes from the run, whole, each time.
_RESERVED: Final = frozenset(
    ("input", "instructions", "tools", "stream", "previous_response_id", "conversation")
)
_ENCRYPTED: Final = "reasoning.encrypted_content"
# Sent when no key is given or set in the environment but a base_url is (local servers).
_NO_KEY: Final = "hookline-no-key"
"""Seconds a stream's body may go on after its final event before the model hangs up."""


def _require_openai() -> None:
    try:
        import openai  # noqa: F401  # pyright: ignore[reportUnusedImport]  # is the extra here?
    except ImportError as exc:
        msg = f"OpenAIResponsesModel needs the openai SDK, an optional extra: {_INSTALL}"
        raise ImportError(msg, name="openai") from exc


@final
class OpenAIResponsesModel:
    """A model behind OpenAI's Responses API: ``OpenAIResponsesModel("gpt-5.5")``.

    ``client`` / ``async_client``, if given, are used as they are (their own retries
    included). A client the model makes itself has retries off and takes ``base_url``
    and ``api_key``, else those of the one client given, else ``OPENAI_BASE_URL`` and
    ``OPENAI_API_KEY`` as the SDK reads them; with a base URL but no key anywhere it
    sends the placeholder key ``"hookline-no-key"``. ``strict_tools=True`` offers the
    tools with ``strict: true`` (their schemas must then meet OpenAI's strict rules).
    Every other keyword (``reasoning``, ``max_output_tokens``, ``temperature``,
    ``tool_choice``, ``store``, ``text``, ``extra_body``...) goes into every request;
    a request's ``output`` (an agent's ``output_type``) is ``text.format``, a
    ``json_schema`` format, strict when the schema allows;
    ``store`` defaults to ``False``, and ``include`` always holds
    ``"reasoning.encrypted_content"`` beside what the caller lists. ``input``,
    ``instructions``, ``tools``, ``stream``, ``previous_response_id`` and
    ``conversation`` are the model's to set: giving one is a ``TypeError``.

    Every call has a total ``deadline`` in seconds (300 unless given), the runner's
    ``time_left()`` when sooner: past it the call ends with ``runner.ModelTimeout``.
    ``close()`` / ``await aclose()`` close the clients the model made.
    """

    __slots__ = (
        "_api_key",
        "_async",
        "_base_url",
        "_client",
        "_given",
        "_given_async",
        "_include",
        "_lock",
        "_params",
        "_strict",
        "deadline",
        "model",
    )

    provider: ClassVar[str] = "openai"
    """Who serves the model, as telemetry names it."""
    native_output: ClassVar[bool] = True
    """An agent's ``output_type`` goes as ``text.format`` (a ``json_schema`` format)."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
        deadline: float = DEFAULT_DEADLINE,
        strict_tools: bool = False,
        **params: Any,
    ) -> None:
        _require_openai()
        name: object = model  # untyped callers may give anything
        if not isinstance(name, str):
            msg = f"OpenAIResponsesModel's model must be a str (the model's name), got {name!r:.60}"
            raise TypeError(msg)
        if not name:
            msg = "OpenAIResponsesModel's model must name a model, got ''"
            raise ValueError(msg)
        reserved = sorted(_RESERVED.intersection(params))
        if reserved:
            msg = (
                f"OpenAIResponsesModel sets {', '.join(reserved)} itself: the instructions, "
                "input and tools come from the run, the whole conversation in every request "
                "(stream() and astream() ask for a stream)"
            )
            raise TypeError(msg)
        strict: object = strict_tools
        if not isinstance(strict, bool):
            msg = f"OpenAIResponsesModel's strict_tools must be a bool, got {strict!r:.60}"
            raise TypeError(msg)
        given: object = params.pop("include", None) or []
        listed = cast("list[object] | tuple[object, ...]", given)
        if not isinstance(given, list | tuple) or not all(isinstance(i, str) for i in listed):
            msg = f"OpenAIResponsesModel's include must be a list of str, got {given!r:.60}"
            raise TypeError(msg)
        self.model: Final = model
        self.deadline: Final = check_deadline("OpenAIResponsesModel's deadline", deadline)
        self._base_url = base_url
        self._api_key = api_key
        self._strict: Final = strict
        names = cast("list[str]", list(listed))
        self._include: Final = [*names, *(() if _ENCRYPTED in names else (_ENCRYPTED,))]
        self._params: Final = {"store": False, **params}
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
            return _answer(call, response.http_response, bytes(body))

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
        return _answer(call, response.http_response, bytes(body))

    def stream(self, request: ModelRequest, /) -> Generator[ModelChunk, None, None]:
        """Answer ``request`` as it is generated, through the sync client: deltas, then
        the whole response (from ``response.completed`` / ``response.incomplete``).

        The request goes out at the first ``next``; closing the iterator early closes
        the HTTP response. The deadline counts from then to the last event, the time the
        consumer takes between deltas included.
        """
        client = self._given or self._client or self._sync_client()
        call = self._call(client.base_url)
        reader = ResponsesStreamReader()
        with (
            call.guarded(),
            _opened(client, self._request(request, call, stream=True)) as response,
        ):
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
                        if reader.finished:
                            break  # what follows the final event is no answer's
                    if reader.finished:
                        drain(call, http, pieces)
                        break
            _check_ended(call, http, reader)
        yield _final(call, http, reader)

    async def astream(self, request: ModelRequest, /) -> AsyncGenerator[ModelChunk, None]:
        """``stream`` through the async client; ``aclose()`` early closes the response."""
        client = self._given_async or await self._async_client()
        call = self._call(client.base_url)
        reader = ResponsesStreamReader()
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
                        for delta in _deltas(call, http, reader, event):
                            yield delta
                        call.check()
                        ended = reader.finished
                        if ended:
                            break  # what follows the final event is no answer's
                if ended:
                    await adrain(call, pieces)
                _check_ended(call, http, reader)
        yield _final(call, http, reader)

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
        """A call starting now, to ``base_url``'s responses, under the deadline."""
        seconds = min(self.deadline, time_left())  # the runner's deadline, when sooner
        return Call(self.model, f"{str(base_url).rstrip('/')}/responses", seconds)

    def _request(
        self, request: ModelRequest, call: Call, *, stream: bool = False
    ) -> dict[str, Any]:
        """The keywords of one ``responses.create``: model, instructions, input, tools,
        params (and streaming), and a timeout no longer than the time the call has left."""
        written = to_input(request.messages)
        if written.left_out:
            log_left_out(
                "OpenAIResponsesModel",
                self.model,
                written.left_out,
                "the Responses API takes back only OpenAI's own reasoning items",
            )
        body: dict[str, Any] = {"model": self.model}
        if written.instructions is not None:
            body["instructions"] = written.instructions
        body["input"] = written.items
        body["include"] = self._include
        body.update(self._params)
        body["timeout"] = call.timeout(self._params.get("timeout"))
        if request.tools:
            body["tools"] = to_tools(request.tools, strict=self._strict)
        if request.output is not None:  # beside the caller's other text options (verbosity)
            given: Any = self._params.get("text") or {}
            body["text"] = {**given, "format": output_format(request.output)}
        if stream:
            body["stream"] = True
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
        return f"OpenAIResponsesModel({self.model!r}{where})"


def _answer(call: Call, response: httpx2.Response, body: bytes) -> ModelResponse:
    """``body`` as the model's answer; a failed response raises ``openai.APIError``, a
    body that is no response a ``ProviderError`` saying why."""
    data = call.parse(response, body, "the body")
    held = cast("dict[str, Any]", data)
    if not isinstance(data, dict) or not isinstance(held.get("output"), list):
        raise call.error("the body is no response: it holds no output list", response, body)
    status: object = held.get("status")
    if not isinstance(status, str | None):
        raise call.error("the body is no response: its status is no string", response, body)
    if status == "failed":
        _raise_failed(response, held)
    if status in {"queued", "in_progress"}:
        problem = f"the response is {status}: a background response is not an answer yet"
        raise call.error(problem, response, body)
    try:
        return from_response(held)
    except (TypeError, ValueError) as error:  # a field of the wrong shape
        raise call.error(f"the body is no response: {error}", response, body) from error


def _deltas(
    call: Call, response: httpx2.Response, reader: ResponsesStreamReader, event: Event
) -> list[TextDelta | ToolCallDelta]:
    """What ``event`` adds to the answer ``reader`` reads, as deltas; an ``error`` or
    ``response.failed`` event raises ``openai.APIError``."""
    data = call.parse(response, event.data.encode("utf-8", "replace"), "an event's data")
    if not isinstance(data, dict):
        raise call.error("an event's data is no JSON object", response, event.data)
    value = cast("dict[str, Any]", data)
    kind: object = value.get("type")
    if kind is None and event.name:  # a server that names the event only in its SSE field
        kind = event.name
        value = {**value, "type": kind}
    if not isinstance(kind, str):
        raise call.error("an event's type is no string", response, event.data)
    if kind == "error":
        _raise_error(response, value)
    if kind == "response.failed":
        failed = value.get("response")
        _raise_failed(response, cast("dict[str, Any]", failed if isinstance(failed, dict) else {}))
    try:
        return reader.read(value)
    except (TypeError, ValueError) as error:  # a field of the wrong shape
        problem = f"a {kind!r} event is no Responses event: {error}"
        raise call.error(problem, response, event.data) from error


def _final(call: Call, response: httpx2.Response, reader: ResponsesStreamReader) -> ModelResponse:
    try:
        return reader.response()
    except (TypeError, ValueError) as error:
        problem = f"the final response of stream {reader.response_id!r} is no response: {error}"
        raise call.error(problem, response) from error


def _raise_error(response: httpx2.Response, value: Mapping[str, Any]) -> NoReturn:
    """An ``error`` event as ``openai.APIError``: its body the error (the nested ``error``
    object when the event holds one), as the SDK raises a stream's error."""
    import openai

    nested = value.get("error")
    body: Mapping[str, Any] = cast("dict[str, Any]", nested) if isinstance(nested, dict) else value
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = "An error occurred during streaming"
    raise openai.APIError(message, response.request, body=dict(body))


def _raise_failed(response: httpx2.Response, failed: Mapping[str, Any]) -> NoReturn:
    """A failed response as ``openai.APIError``, its body the response's ``error``."""
    import openai

    error = failed.get("error")
    body: dict[str, Any] = cast("dict[str, Any]", error) if isinstance(error, dict) else {}
    message = body.get("message")
    if not isinstance(message, str) or not message:
        message = f"the response {failed.get('id')!r:.60} failed"
    raise openai.APIError(message, response.request, body=body)


def _opened(client: openai.OpenAI, params: dict[str, Any]) -> AbstractContextManager[Body]:
    """The request sent through the sync client, its body left for the call to read."""
    return cast(
        "AbstractContextManager[Body]",
        client.responses.with_streaming_response.create(**params),
    )


def _aopened(
    client: openai.AsyncOpenAI, params: dict[str, Any]
) -> AbstractAsyncContextManager[AsyncBody]:
    """The request sent through the async client, its body left for the call to read."""
    return cast(
        "AbstractAsyncContextManager[AsyncBody]",
        client.responses.with_streaming_response.create(**params),
    )


def _check_ended(call: Call, response: httpx2.Response, reader: ResponsesStreamReader) -> None:
    """A stream that ended before its final event was cut off: worth a retry."""
    if not reader.finished:
        raise call.error(
            "the stream ended before the answer did: no response.completed or "
            "response.incomplete event",
            response,
            transient=True,
        )
