"""The async clients ``OpenAIChatModel`` makes: one per event loop, closed with that loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Final, final

if TYPE_CHECKING:
    import openai

__all__ = ["OnLoop", "closing"]


@final
class OnLoop:
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


async def closing(client: openai.AsyncOpenAI) -> AsyncGenerator[None, None]:
    """Suspended at its ``yield`` for the client's life, closes it when finalized.

    ``asyncio.run`` and ``asyncio.Runner`` finalize a loop's suspended async generators
    before closing it (``shutdown_asyncgens``), so a client made on a loop closes its
    connections on that loop, and ``asyncio.run`` after ``asyncio.run`` leaks none.
    """
    try:
        yield
    finally:
        await client.close()
