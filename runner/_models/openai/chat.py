"""``OpenAIChatModel``: any Chat Completions endpoint through the official ``openai`` SDK.

OpenAI itself, and every server that speaks its wire format: vLLM, Ollama (``/v1``),
llama.cpp's ``llama-server``, LM Studio, OpenRouter. The SDK is the optional extra
``hookline[openai]``: importing ``runner`` never imports it; making a model does,
and without the extra fails there with the command that installs it.

``generate`` speaks through the SDK's sync client (``Runner.run``), ``agenerate``
through its async client (``Runner.arun``, with no thread hop); ``stream`` and
``astream`` are their streamed forms (``Runner.stream``). The clients are made on
first use, with the SDK's own retries off: hookline's error hooks own every retry, so
each attempt shows in events and hooks. What the SDK raises (``openai.RateLimitError``,
``APITimeoutError``, ``APIConnectionError``, ``InternalServerError``,
``BadRequestError``...) leaves ``generate`` and the streams unchanged, for
``on_model_error``: a stream raises it before its first delta, or mid-stream.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncGenerator, Generator
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast, final

from hooks import ModelRequest, ModelResponse
from runner._events import ModelChunk
from runner._models.openai.clients import OnLoop, closing
from runner._models.openai.stream import StreamReader
from runner._models.openai.wire import from_completion, to_messages, to_tools

if TYPE_CHECKING:
    import openai
    from openai import AsyncStream, Stream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["OpenAIChatModel"]

_INSTALL: Final = "pip install 'hookline[openai]'"
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
    ``tool_choice``, ``extra_body``...) goes into every request.

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
        "model",
    )

    provider: ClassVar[str] = "openai"
    """Who serves the model, as telemetry names it."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
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
        self._base_url = base_url
        self._api_key = api_key
        self._params: Final = params
        self._given = client
        self._given_async = async_client
        self._client: openai.OpenAI | None = None
        self._async: OnLoop | None = None
        self._lock = threading.Lock()

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the sync client; what the SDK raises propagates."""
        client = self._given or self._client or self._sync_client()
        # The SDK's overloads cannot tell which one `**params` picks: never a stream here.
        completion = cast(
            "ChatCompletion", client.chat.completions.create(**self._request(request))
        )
        return from_completion(completion)

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the async client; what the SDK raises propagates."""
        client = self._given_async or await self._async_client()
        completion = cast(
            "ChatCompletion", await client.chat.completions.create(**self._request(request))
        )
        return from_completion(completion)

    def stream(self, request: ModelRequest, /) -> Generator[ModelChunk, None, None]:
        """Answer ``request`` as it is generated, through the sync client: deltas, then
        the whole response (usage from the last chunk).

        The request goes out at the first ``next``; closing the iterator early closes
        the HTTP response.
        """
        client = self._given or self._client or self._sync_client()
        chunks = cast(
            "Stream[ChatCompletionChunk]",
            client.chat.completions.create(**self._request(request, stream=True)),
        )
        reader = StreamReader()
        try:
            for chunk in chunks:
                yield from reader.read(chunk)
        finally:
            chunks.close()
        yield reader.response()

    async def astream(self, request: ModelRequest, /) -> AsyncGenerator[ModelChunk, None]:
        """``stream`` through the async client; ``aclose()`` early closes the response."""
        client = self._given_async or await self._async_client()
        chunks = cast(
            "AsyncStream[ChatCompletionChunk]",
            await client.chat.completions.create(**self._request(request, stream=True)),
        )
        reader = StreamReader()
        try:
            async for chunk in chunks:
                for delta in reader.read(chunk):
                    yield delta
        finally:
            await chunks.close()
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

    def _request(self, request: ModelRequest, *, stream: bool = False) -> dict[str, Any]:
        """The keywords of one ``create``: model, messages, tools and params (and streaming)."""
        body = {"model": self.model, "messages": to_messages(request.messages), **self._params}
        if request.tools:
            body["tools"] = to_tools(request.tools)
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
