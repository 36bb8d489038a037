"""A model attempt in a streamed run: its deltas go to the channel, its response is the outcome.

The model streams with ``astream`` (awaited), else ``stream`` (each step on the
thread pool, so a blocking client never blocks the loop), else it answers with
``agenerate`` / ``generate`` and its text goes out as one delta. Whatever streams, the
last item must be the whole ``ModelResponse``: that is the attempt's answer, the one
``after_model`` sees. The stream is closed when the attempt ends early (an error, or
the run cancelled by a consumer that stopped reading).

What one attempt sent out is kept on its own ``Streamed``, made per attempt by the
guarded operation, never on the agent's ``Plan``: two concurrent calls of one
sub-agent share a plan, and each attempt's text is told apart by the call it answers.

A held attempt (the stream's ``hold``, ``runner._streaming.hold``) keeps its deltas on
its ``Streamed`` once the stream hooks passed them; the guarded operation lets them out
(``release``) when ``after_model`` has passed the answer. Holding every ``N``
characters, the text so far is shown to ``after_model`` as a partial answer each time
it has grown by ``N``, and what was held goes out when the check passes it unchanged;
from its first tool-call piece on, an attempt waits for its whole answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from typing import Any, Final, assert_never, cast, final

from hooks import (
    AFTER_MODEL,
    Cont,
    Failure,
    Halt,
    ModelContext,
    ModelResponse,
    Outcome,
    StopRun,
    Success,
)
from runner._events import ModelChunk, TextDelta, ToolCallDelta
from runner._run.plan import Plan
from runner._run.settings import Settings
from runner._streaming.channel import Channel
from runner._streaming.delta import ON_DELTA, DeltaContext
from runner._streaming.hold import PARTIAL

__all__ = ["Streamed", "release", "stream_model"]

_END: Final = object()
# A delta built by filling its slots directly, with no call to its __init__: a fifth
# less per delta than TextDelta(...) (the hot path of pieces from memory).
_new: Final = object.__new__
_set_text: Final = TextDelta.__dict__["text"].__set__
_set_agent: Final = TextDelta.__dict__["agent"].__set__
_set_branch: Final = TextDelta.__dict__["branch"].__set__
_set_call_id: Final = TextDelta.__dict__["call_id"].__set__


@final
class Streamed:
    """What one model attempt streamed: where its deltas come from, and what went out.

    ``agent``, ``branch`` and ``call_id`` are filled into each of its deltas (``call_id``:
    the parent's tool call this sub-agent turn answers, ``None`` for the root agent);
    ``attempt`` is its number. ``shown`` says some delta of it reached the stream,
    ``text`` holds the model's own text pieces, whatever the stream hooks showed of
    them: the guarded operation compares them with the answer to tell a stream to
    discard what it showed.

    ``every`` is how it holds: ``None`` not at all, ``0`` until its answer passed
    ``after_model``, ``N`` checking every ``N`` characters (``0`` again after a check
    that did not pass); ``held`` the deltas waiting, ``size`` the characters of its
    text, ``checked`` how many of them the last check saw.
    """

    __slots__ = (
        "agent",
        "attempt",
        "branch",
        "call_id",
        "checked",
        "every",
        "held",
        "shown",
        "size",
        "text",
    )

    def __init__(
        self,
        agent: str,
        branch: str,
        call_id: str | None,
        attempt: int,
        every: int | None = None,
    ) -> None:
        self.agent: Final = agent
        self.branch: Final = branch
        self.call_id: Final = call_id
        self.attempt: Final = attempt
        self.shown = False
        self.text: list[str] = []
        self.every = every
        self.held: list[TextDelta | ToolCallDelta] = []
        self.size = 0
        self.checked = 0


def release(channel: Channel, streamed: Streamed) -> None:
    """Let out every delta ``streamed`` holds, in order (the stream takes them at once)."""
    held = streamed.held
    if not held:
        return
    for delta in held:
        channel.push(delta)
    held.clear()
    streamed.shown = True


async def stream_model(
    settings: Settings, plan: Plan, channel: Channel, ctx: ModelContext, streamed: Streamed
) -> Outcome[Any]:
    """One streamed attempt: deltas to ``channel`` as they come, the final response as outcome.

    What goes out is counted on ``streamed``. Each delta passes the ``on_delta`` hooks
    first; a ``Halt`` there ends the model's stream (closing it cancels the call) and
    its response is the attempt's answer.
    """
    model: Any = plan.agent.model
    request = ctx.request
    try:
        if callable(getattr(model, "astream", None)):
            return await _drain(plan, channel, ctx, streamed, model.astream(request))
        if callable(getattr(model, "stream", None)):
            chunks = _threaded(settings, model.stream(request))
            return await _drain(plan, channel, ctx, streamed, chunks)
        if plan.agent.model_is_async:
            response = await model.generate(request)
        elif plan.agent.model_has_agenerate:
            response = await model.agenerate(request)
        else:
            loop = asyncio.get_running_loop()
            response = await loop.run_in_executor(settings.pool(), model.generate, request)
    except StopRun:
        raise
    except Exception as exc:
        return Failure(exc)
    if isinstance(response, ModelResponse) and response.text:
        # The whole answer at once: the check after it is after_model's own, no partial one.
        delta = TextDelta(response.text)
        halted = await _put(plan, channel, ctx, streamed, delta, check=False)
        if halted is not None:
            return Success(halted)
    return Success(response)


async def _drain(
    plan: Plan,
    channel: Channel,
    ctx: ModelContext,
    streamed: Streamed,
    chunks: AsyncIterator[ModelChunk],
) -> Outcome[Any]:
    response: ModelResponse | None = None
    # The common case's names, looked up once: no stream hook, no hold, a consumer keeping up.
    inline = not plan.hooks_deltas and streamed.every is None
    agent, branch, call_id = streamed.agent, streamed.branch, streamed.call_id
    keep, push, has_room = streamed.text.append, channel.push, channel.has_room
    shown = False  # whether the inline path sent a delta, told ``streamed`` at the end
    try:
        async for item in chunks:
            chunk: object = item  # a model outside the type checker's reach may yield anything
            if response is not None:
                msg = f"a model stream yielded {type(chunk).__name__} after its ModelResponse"
                return Failure(TypeError(msg))
            if type(chunk) is TextDelta and inline and has_room():
                text = chunk.text
                keep(text)
                shown = True
                delta: TextDelta = _new(TextDelta)
                _set_text(delta, text)
                _set_agent(delta, agent)
                _set_branch(delta, branch)
                _set_call_id(delta, call_id)
                push(delta)
            elif isinstance(chunk, ModelResponse):
                response = chunk
            elif isinstance(chunk, TextDelta | ToolCallDelta):
                halted = await _put(plan, channel, ctx, streamed, chunk)
                if halted is not None:  # a stream hook ended the call: its answer stands
                    return Success(halted)
            else:
                msg = (
                    "a model stream yields TextDelta, ToolCallDelta, then one ModelResponse; "
                    f"got {type(chunk).__name__} {chunk!r:.60}"
                )
                return Failure(TypeError(msg))
    finally:
        if shown:
            streamed.shown = True
        closing = getattr(chunks, "aclose", None)
        if closing is not None:
            await closing()
    if response is None:
        return Failure(TypeError("a model stream ended without its ModelResponse"))
    return Success(response)


async def _put(
    plan: Plan,
    channel: Channel,
    ctx: ModelContext,
    streamed: Streamed,
    delta: TextDelta | ToolCallDelta,
    *,
    check: bool = True,
) -> ModelResponse | None:
    """Send one delta out through the stream hooks (or hold it, in a held attempt); a
    hook's ``Halt`` response, if any.

    With ``check``, a held attempt whose text has grown by its ``every`` characters
    since the last check is checked."""
    agent, branch, call_id = streamed.agent, streamed.branch, streamed.call_id
    if type(delta) is TextDelta:
        streamed.text.append(delta.text)  # the model's own text, whatever the hooks show
        streamed.size += len(delta.text)
        delta = TextDelta(delta.text, agent, branch, call_id)
    else:
        delta = replace(delta, agent=agent, branch=branch, call_id=call_id)
    shown: TextDelta | ToolCallDelta | None = delta
    if plan.hooks_deltas:
        decision = await plan.before(ON_DELTA, DeltaContext(plan.invocation, delta, ctx.attempt))
        match decision:
            case Halt(response):
                return response
            case Cont(passed):
                shown = passed.delta  # None: dropped from the stream, still part of the answer
            case _:
                assert_never(decision)
    if streamed.every is not None:
        await _hold(plan, channel, ctx, streamed, shown, check=check and type(delta) is TextDelta)
        return None
    if shown is None:
        return None
    delta = shown
    streamed.shown = True
    if channel.has_room():
        channel.push(delta)
    else:
        await channel.put(delta)  # a slow consumer: wait for room
    return None


async def _hold(
    plan: Plan,
    channel: Channel,
    ctx: ModelContext,
    streamed: Streamed,
    shown: TextDelta | ToolCallDelta | None,
    *,
    check: bool,
) -> None:
    """Keep a held attempt's delta (``None``: a stream hook dropped it); with ``check``
    (a text delta), check the text so far once it grew by the attempt's ``every``."""
    if shown is not None:
        streamed.held.append(shown)
        if type(shown) is ToolCallDelta:  # no partial check reads a tool call
            streamed.every = 0  # the whole answer decides
    every = streamed.every
    if every and check and streamed.size - streamed.checked >= every:
        await _check(plan, channel, ctx, streamed)


async def _check(plan: Plan, channel: Channel, ctx: ModelContext, streamed: Streamed) -> None:
    """Show ``after_model`` the attempt's text so far as a partial answer; let out what is
    held when it passes that text unchanged, else hold the rest of the attempt."""
    streamed.checked = streamed.size
    text = "".join(streamed.text)
    partial = ModelResponse(text, finish_reason=PARTIAL)
    passed = await plan.after(AFTER_MODEL, Success(partial), ctx)
    if type(passed) is Success and passed.unwrap().text == text:
        release(channel, streamed)
    else:
        streamed.every = 0  # the whole answer decides


async def _threaded(settings: Settings, chunks: Iterator[ModelChunk]) -> AsyncIterator[ModelChunk]:
    """A sync stream read one item at a time on the thread pool."""
    loop = asyncio.get_running_loop()
    step = functools.partial(next, chunks, _END)
    try:
        while True:
            chunk = await loop.run_in_executor(settings.pool(), step)
            if chunk is _END:
                return
            yield cast("ModelChunk", chunk)  # next() gave an item of the stream, not _END
    finally:
        close = getattr(chunks, "close", None)
        if close is not None:
            with contextlib.suppress(ValueError):  # still on its thread: ends with that step
                close()
