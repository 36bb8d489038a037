"""The stream hook: ``on_delta(ctx)`` sees each delta of a streamed run on its way out.

``ON_DELTA`` is a before-kind point of the runner's: a callback returns ``Cont(ctx)``
to pass the delta on, ``Cont(replace(ctx, delta=other))`` to change it, or
``Cont(replace(ctx, delta=None))`` to drop it -- what the consumer sees, never what
the run records: the model's whole response is still the attempt's answer. ``Halt(response)``
cancels the in-flight model call; ``response`` stands in for its answer (and the text
already streamed is announced discarded when it differs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from hooks import BeforePoint, BeforeResult, Invocation, ModelResponse
from hooks._slots import slot_init
from runner._events import TextDelta, ToolCallDelta

__all__ = ["ON_DELTA", "AsyncOnDelta", "DeltaContext", "OnDelta"]


@slot_init
@dataclass(frozen=True, slots=True)
class DeltaContext:
    """One delta of a streamed model ``attempt``; ``delta=None`` drops it from the stream."""

    invocation: Invocation
    delta: TextDelta | ToolCallDelta | None
    attempt: int = 1


ON_DELTA: Final[BeforePoint[DeltaContext, ModelResponse]] = BeforePoint(
    "on_delta", context=DeltaContext, value=ModelResponse
)
"""The stream hook point: dispatched for every delta of a streamed run."""


class OnDelta(Protocol):
    """``on_delta``: pass, change or drop a delta on its way out, or halt the model call."""

    def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """``Cont(ctx)`` passes ``ctx.delta`` on (``None``: dropped); ``Halt(response)``
        cancels the model call and answers with ``response``."""
        ...


class AsyncOnDelta(Protocol):
    """``OnDelta`` with an ``async def`` method."""

    async def on_delta(self, ctx: DeltaContext, /) -> BeforeResult[DeltaContext, ModelResponse]:
        """As ``OnDelta.on_delta``, awaited."""
        ...
