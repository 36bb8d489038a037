"""``agui_app``: an ASGI endpoint running a hookline agent for any AG-UI client.

``POST`` a ``RunAgentInput`` (JSON); the answer is the run as AG-UI events over
server-sent events (``text/event-stream``), ``Runner.stream`` translated as it goes
(``runner.web._agui_events``). A ``RunAgentInput`` with ``resume`` entries answers the
interrupts of a paused run: its state comes from the runner's session store
(``runner.paused``), and the run goes on with ``Runner.resume_stream`` (a
``DurableRunner`` resumes with ``aresume``, its recorded events sent once it ends).

Refusals come before any event, as JSON ``{"error": message}``: 400 a body that is no
JSON, 405 another method than POST, 413 a body over ``max_body``, 422 an input that does
not fit (``runner.web._agui_input``, ``runner.web._agui_pause``), 409 a resume of a run
that is not waiting (resumed already, here or elsewhere; or never paused), or of a thread
the server's conversation does not match. A run that fails after it started ends with
``RUN_ERROR``. A client that leaves cancels its run (nothing saved to the session).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, MutableMapping
from typing import Any, Final, TypeAlias, final

from ag_ui.core import RunAgentInput
from pydantic import ValidationError

from hooks import HookEvent, ToolSpec, observing
from runner import (
    DurableRunner,
    InvalidDecisions,
    ResumeRefused,
    Runner,
    RunResult,
    RunStartedEvent,
    SessionBusy,
    SessionConflict,
    StreamEvent,
)
from runner import RunFinishedEvent as HooklineFinished
from runner._streaming.hold import Hold, checked_hold
from runner.web._agui_events import Translator
from runner.web._agui_input import place_history, run_messages
from runner.web._agui_pause import Refusal, decisions, paused_run_id

__all__ = ["AGUIApp", "agui_app"]

Scope: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send: TypeAlias = Callable[[MutableMapping[str, Any]], Awaitable[None]]

_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


@final
class AGUIApp:
    """The ASGI app ``agui_app`` makes; ``runner`` runs and resumes its runs."""

    __slots__ = ("_hold", "_hooks", "_max_body", "_user_id", "runner")

    def __init__(
        self,
        runner: Runner | DurableRunner,
        *,
        user_id: str,
        hold: Hold,
        hook_events: bool,
        max_body: int,
    ) -> None:
        self.runner: Final = runner
        self._user_id: Final = user_id
        self._hold: Final = hold
        self._hooks: Final = hook_events
        self._max_body: Final = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point: lifespan and HTTP; every path of the app is the endpoint."""
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":  # a websocket: nothing here speaks it
            msg = f"the AG-UI endpoint serves HTTP, not {scope['type']!r}"
            raise RuntimeError(msg)
        try:
            if scope["method"] != "POST":
                raise Refusal(405, f"POST a RunAgentInput here, not {scope['method']}")
            given = _parse(await _body(receive, self._max_body))
            if not given.thread_id or not given.run_id:
                raise Refusal(422, "threadId and runId must be non-empty")
            translator = Translator(given.thread_id, given.run_id, self._spec)
            served = await (
                self._resume(given, translator) if given.resume else self._run(given, translator)
            )
        except Refusal as refusal:
            await _json(send, refusal.status, {"error": str(refusal)})
            return
        await _stream(receive, send, served)

    # -- runs -------------------------------------------------------------------------

    async def _run(self, given: RunAgentInput, translator: Translator) -> _Served:
        message, history = run_messages(given)
        store = self.runner.sessions
        await asyncio.to_thread(place_history, store, self._user_id, given.thread_id, history)
        if isinstance(self.runner, DurableRunner):
            run = self.runner.arun(message, user_id=self._user_id, session_id=given.thread_id)
            return await _durable(translator, run, self.runner.agent.name)
        hooks: list[HookEvent] = []
        events = self.runner.stream(
            message,
            user_id=self._user_id,
            session_id=given.thread_id,
            callbacks=[observing(hooks.append)] if self._hooks else (),
            hold=self._hold,
        )
        return await _started(translator, events, hooks)

    async def _resume(self, given: RunAgentInput, translator: Translator) -> _Served:
        entries = given.resume or []
        run_id = paused_run_id(entries)
        state = await asyncio.to_thread(self.runner.paused, run_id)
        if state is None:
            msg = (
                f"run {run_id!r:.120} is not waiting for a decision: it was resumed already "
                "(here or in another process), or never paused in this server's store"
            )
            raise Refusal(409, msg)
        if state.user_id != self._user_id or state.session_id != given.thread_id:
            msg = f"run {run_id!r} paused in another thread than {given.thread_id!r} (or user)"
            raise Refusal(409, msg)
        chosen = decisions(state, entries)
        if isinstance(self.runner, DurableRunner):
            resumed = self.runner.aresume(state, chosen)
            return await _durable(translator, resumed, self.runner.agent.name)
        hooks: list[HookEvent] = []
        events = self.runner.resume_stream(
            state,
            chosen,
            callbacks=[observing(hooks.append)] if self._hooks else (),
            hold=self._hold,
        )
        return await _started(translator, events, hooks)

    def _spec(self, agent: str, tool: str) -> ToolSpec | None:
        for each in self.runner.agent.walk():
            if each.name == agent:
                return next((spec for spec in each.specs if spec.name == tool), None)
        return None


def agui_app(
    runner: Runner | DurableRunner,
    *,
    user_id: str = "user",
    hold: Hold = "auto",
    hook_events: bool = True,
    max_body: int = 1024 * 1024,
) -> AGUIApp:
    """An ASGI app serving ``runner``'s agent to AG-UI clients (see the module docs).

    Runs are ``user_id``'s; an AG-UI thread is the session of that id. ``hold`` is
    ``Runner.stream``'s. ``hook_events`` observes each run (``observing``, which a
    paused run does not record: any resume may go on without it) to send the hook
    decisions as ``hookline.hook`` events. ``max_body`` caps a
    request's bytes. The app checks no token: mount it behind the inbox app's guard or
    your own.
    """
    given: object = runner  # callers without a type checker pass anything
    if not isinstance(given, Runner | DurableRunner):
        msg = f"runner must be a Runner or a DurableRunner, got {type(given).__name__}"
        raise TypeError(msg)
    checked: object = user_id
    if not isinstance(checked, str) or not checked:
        msg = f"user_id must be a non-empty str, got {user_id!r:.60}"
        raise ValueError(msg)
    if type(max_body) is not int or max_body < 1:
        msg = f"max_body must be a positive int, got {max_body!r:.60}"
        raise ValueError(msg)
    checked_hold(hold)  # a misspelled mode is the server's error: refused here, not per request
    return AGUIApp(runner, user_id=user_id, hold=hold, hook_events=hook_events, max_body=max_body)


# -- the parts ------------------------------------------------------------------------


def _refusal(exc: Exception) -> Refusal:
    if isinstance(exc, InvalidDecisions):
        return Refusal(422, str(exc))
    if isinstance(exc, ResumeRefused | SessionBusy | SessionConflict):
        return Refusal(409, str(exc))
    return Refusal(422, f"{type(exc).__name__}: {exc}")


@final
class _Served:
    """What a response sends: ``opening``, then each of ``events`` translated (a streamed
    run's; none for a durable run's, recorded), then ``closing``."""

    __slots__ = ("closing", "events", "hooks", "opening", "translator")

    def __init__(
        self,
        translator: Translator,
        opening: str,
        events: AsyncGenerator[StreamEvent, None] | None = None,
        hooks: list[HookEvent] | None = None,
        closing: str = "",
    ) -> None:
        self.translator: Final = translator
        self.opening: Final = opening
        self.events: Final = events
        self.hooks: Final = hooks
        self.closing: Final = closing


async def _started(
    translator: Translator, events: AsyncGenerator[StreamEvent, None], hooks: list[HookEvent]
) -> _Served:
    """A streamed run, its start taken here: a refusal comes as ``Refusal``."""
    try:
        first = await anext(events)
    except (
        InvalidDecisions,
        ResumeRefused,
        SessionBusy,
        SessionConflict,
        TypeError,
        ValueError,
    ) as exc:
        raise _refusal(exc) from exc
    if not isinstance(first, RunStartedEvent):  # pragma: no cover -- stream's own contract
        msg = f"a stream starts with RunStartedEvent, got {type(first).__name__}"
        raise TypeError(msg)
    return _Served(translator, translator.started(first), events, hooks)


async def _durable(translator: Translator, run: Awaitable[RunResult], agent: str) -> _Served:
    """A durable run, once it ended: its recorded events (``Refusal`` for a refused
    resume, before anything ran)."""
    try:
        done = await run
    except (InvalidDecisions, ResumeRefused, SessionBusy, SessionConflict) as exc:
        raise _refusal(exc) from exc
    except Exception as exc:  # the run failed: the client hears why
        opening = translator.started(RunStartedEvent(run_id="", session_id="", agent=agent, time=0))
        return _Served(translator, opening, closing=translator.failed(exc))
    now = time.time()
    opening = translator.started(
        RunStartedEvent(run_id=done.run_id, session_id=done.session_id, agent=agent, time=now)
    )
    recorded = (*done.events, HooklineFinished(result=done, time=now))
    return _Served(translator, opening, closing="".join(map(translator.recorded, recorded)))


async def _stream(receive: Receive, send: Send, served: _Served) -> None:
    """Send ``served`` as the body of a server-sent events response, until the client leaves.

    One loop from the run's events to ``send`` (no generator between them: a delta's cost
    is its translation and its ``send``).
    """
    task = asyncio.current_task()
    assert task is not None  # an ASGI app runs in a task
    left = asyncio.Event()

    async def watch() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass
        left.set()
        task.cancel()

    await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
    watcher = asyncio.create_task(watch())
    events, translator, hooks = served.events, served.translator, served.hooks
    try:
        await send(
            {"type": "http.response.body", "body": served.opening.encode(), "more_body": True}
        )
        if events is not None:
            translate = translator.event
            try:
                async for event in events:
                    frame = translate(event)
                    if hooks:  # hook decisions told while the run made this event
                        frame = "".join(map(translator.hook, hooks)) + frame
                        hooks.clear()
                    if frame:
                        await send(
                            {
                                "type": "http.response.body",
                                "body": frame.encode(),
                                "more_body": True,
                            }
                        )
            except Exception as exc:  # the run failed: the client hears why
                failed = translator.failed(exc)
                await send(
                    {"type": "http.response.body", "body": failed.encode(), "more_body": True}
                )
        watcher.cancel()
        await send(
            {"type": "http.response.body", "body": served.closing.encode(), "more_body": False}
        )
    except asyncio.CancelledError:
        if not left.is_set():
            raise
        task.uncancel()  # the client left: the run is cancelled, the response is over
    finally:
        watcher.cancel()
        if events is not None:
            await events.aclose()


async def _body(receive: Receive, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise Refusal(400, "the client left before its request was read")
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refusal(413, f"the request is over {limit} bytes")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parse(body: bytes) -> RunAgentInput:
    try:
        raw: object = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise Refusal(400, f"the body is not JSON: {exc}") from exc
    if not isinstance(raw, dict):
        raise Refusal(422, f"the body must be a RunAgentInput object, got {type(raw).__name__}")
    try:
        return RunAgentInput.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error['loc']))}: {error['msg']}" for error in exc.errors()[:5]
        )
        raise Refusal(422, f"the body is not a RunAgentInput: {problems}") from exc


async def _json(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if status == 405:
        headers.append((b"allow", b"POST"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return
