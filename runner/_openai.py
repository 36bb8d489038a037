"""``OpenAIChatModel``: any Chat Completions endpoint through the official ``openai`` SDK.

OpenAI itself, and every server that speaks its wire format: vLLM, Ollama (``/v1``),
llama.cpp's ``llama-server``, LM Studio, OpenRouter. The SDK is the optional extra
``hookline[openai]``: importing ``runner`` never imports it; making a model does,
and without the extra fails there with the command that installs it.

``generate`` speaks through the SDK's sync client (``Runner.run``), ``agenerate``
through its async client (``Runner.run_async``, with no thread hop). Both are made on
first use, with the SDK's own retries off: hookline's error hooks own every retry, so
each attempt shows in events and hooks. What the SDK raises (``openai.RateLimitError``,
``APITimeoutError``, ``APIConnectionError``, ``InternalServerError``,
``BadRequestError``...) leaves ``generate`` unchanged, for ``on_model_error``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, ClassVar, Final, cast, final

from hooks import ModelRequest, ModelResponse
from runner._openai_wire import from_completion, to_messages, to_tools

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

__all__ = ["OpenAIChatModel"]

_INSTALL: Final = "pip install 'hookline[openai]'"
# The adapter sets these itself; streaming is Runner.stream's (a later release).
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
                "tools come from the run (streaming comes with Runner.stream)"
            )
            raise TypeError(msg)
        self.model: Final = model
        self._base_url = base_url
        self._api_key = api_key
        self._params: Final = params
        self._given = client
        self._given_async = async_client
        self._client: openai.OpenAI | None = None
        self._async: _OnLoop | None = None
        self._lock = threading.Lock()

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the sync client; what the SDK raises propagates."""
        client = self._given or self._client or self._sync_client()
        # The SDK's overloads cannot tell which one `**params` picks: never a stream here.
        completion = cast(
            "ChatCompletion",
            client.chat.completions.create(
                model=self.model, messages=to_messages(request.messages), **self._request(request)
            ),
        )
        return from_completion(completion)

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request`` through the async client; what the SDK raises propagates."""
        client = self._given_async or await self._async_client()
        completion = cast(
            "ChatCompletion",
            await client.chat.completions.create(
                model=self.model, messages=to_messages(request.messages), **self._request(request)
            ),
        )
        return from_completion(completion)

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

    def _request(self, request: ModelRequest) -> dict[str, Any]:
        if not request.tools:
            return self._params
        return {**self._params, "tools": to_tools(request.tools)}

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
        keeper = _closing(client)
        await anext(keeper)  # runs to its yield: nothing suspends between check and set
        self._async = _OnLoop(loop, client, keeper)
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


@final
class _OnLoop:
    """An async client and the loop it belongs to; ``keeper`` closes it with the loop."""

    __slots__ = ("client", "keeper", "loop")

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        client: openai.AsyncOpenAI,
        keeper: AsyncGenerator[None, None],
    ) -> None:
        self.loop: Final = loop
        self.client: Final = client
        self.keeper: Final = keeper


async def _closing(client: openai.AsyncOpenAI) -> AsyncGenerator[None, None]:
    """Suspended at its ``yield`` for the client's life, closes it when finalized.

    ``asyncio.run`` and ``asyncio.Runner`` finalize a loop's suspended async generators
    before closing it (``shutdown_asyncgens``), so a client made on a loop closes its
    connections on that loop, and ``asyncio.run`` after ``asyncio.run`` leaks none.
    """
    try:
        yield
    finally:
        await client.close()
