"""The model protocols: what a model implements for a run to call it.

``generate`` is the one method a model must have (``Model``: sync; ``AsyncModel``: an
``async def generate``). Optional, for async and streamed runs: ``agenerate`` beside a
sync ``generate``, ``stream`` (``StreamingModel``) and ``astream``
(``AsyncStreamingModel``). docs/models.md says which a run calls, in what order.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Protocol

from hooks import ModelRequest, ModelResponse
from runner._events import ModelChunk

__all__ = ["AsyncModel", "AsyncStreamingModel", "Model", "StreamingModel"]


class Model(Protocol):
    """A model: ``generate(request) -> ModelResponse``, sync. See also ``AsyncModel``.

    A model may also define ``async def agenerate(request)``: ``Runner.arun``
    awaits it instead of running ``generate`` on a thread, so one model object serves
    sync and async runs alike (``OpenAIChatModel`` does).
    """

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer ``request``: text, tool calls, or both. Raising is a model error."""
        ...


class AsyncModel(Protocol):
    """A model whose ``generate`` is ``async def``; usable with ``Runner.arun`` only."""

    def generate(self, request: ModelRequest, /) -> Awaitable[ModelResponse]:
        """Answer ``request``: text, tool calls, or both. Raising is a model error."""
        ...


class StreamingModel(Protocol):
    """A model that can stream: ``stream(request)`` yields deltas, then the whole response.

    The items are ``TextDelta`` and ``ToolCallDelta`` pieces, as they are generated, and
    last the complete ``ModelResponse`` (with usage, when known). ``Runner.stream`` uses
    it (on a worker thread); a model without it is streamed as one delta.
    """

    def stream(self, request: ModelRequest, /) -> Iterator[ModelChunk]:
        """Yield the answer's deltas as generated, then the whole ``ModelResponse``."""
        ...


class AsyncStreamingModel(Protocol):
    """``StreamingModel`` for async code: ``astream(request)`` is an async iterator."""

    def astream(self, request: ModelRequest, /) -> AsyncIterator[ModelChunk]:
        """Yield the answer's deltas as generated, then the whole ``ModelResponse``."""
        ...
