"""The inbox and trace app: pages, JSON endpoints, decisions, live runs over SSE.

Routes (all behind ``Guard``: the token or the auth hook; CSRF on POST):

- ``GET /`` the inbox page, ``GET /trace/{run_id}`` a run's trace page, ``/static/``
  their one script and style sheet (bundled: no CDN, no build step);
- ``GET /api/paused``: every paused run of the store (``SessionStore.list_paused``),
  each request with its reason, the hook that paused it (or the ``before_tool`` chain
  that may have), the call and, with content on, its arguments;
- ``POST /api/runs/{run_id}/decide``: decisions for every request of a paused run; the
  resume runs in this process (``Runner.resume_stream``), and the answer comes once it
  started (202) or was refused: 409 when the run is not waiting any more (decided
  already, here or in another process: the resume takes the session's lease and the
  stored state, so exactly one of two deciders wins), 422 for a decision that does not
  fit;
- ``GET /api/runs/{run_id}``: a run's records (the live ones of a run this server
  resumed, else the store's ``load_records``); ``GET /api/runs/{run_id}/events``: the
  same as server-sent events, live while the run goes on;
- ``/agui``: where the AG-UI endpoint is mounted (``agui=``; 404 without one).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from importlib.resources import files
from typing import Any, Final, TypeAlias, final

from sse_starlette import EventSourceResponse
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from hooks import BEFORE_TOOL, HookEvent, observing
from runner import (
    InboxStore,
    InvalidDecisions,
    PausedRun,
    PendingRequest,
    ResumeRefused,
    RunFinishedEvent,
    Runner,
    RunStartedEvent,
    RunState,
    SessionBusy,
    SessionStore,
    inbox_store,
    load_events,
)
from runner._telemetry.genai import capture_from_env
from runner.web._decide import BadDecision, parse_decisions
from runner.web._live import Live, LiveRuns
from runner.web._security import LOCAL_HOSTS, Auth, Guard, new_token, set_csrf_cookie
from runner.web._views import JSON, paused_json, record_json

__all__ = ["RunnerSource", "WebApp", "inbox_app"]

RunnerSource: TypeAlias = Runner | Callable[[SessionStore], Runner]
"""A ``Runner`` over the store, or a function making one from the store."""

_STATIC: Final = files("runner.web") / "static"
_MAX_BODY: Final = 1024 * 1024  # a decision form is small: a larger body is refused


@final
class WebApp:
    """The ASGI app ``inbox_app`` makes: ``token`` is what a browser must bring (``None``
    when an ``auth`` hook decides), ``runner`` resumes the runs decided here."""

    __slots__ = ("_asgi", "runner", "store", "token")

    def __init__(
        self, asgi: ASGIApp, runner: Runner, store: SessionStore, token: str | None
    ) -> None:
        self._asgi: Final = asgi
        self.runner: Final = runner
        self.store: Final = store
        self.token: Final = token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The ASGI entry point."""
        await self._asgi(scope, receive, send)


def inbox_app(
    runner: RunnerSource,
    store: SessionStore,
    *,
    token: str | None = None,
    auth: Auth | None = None,
    capture: bool | None = None,
    hosts: Collection[str] = LOCAL_HOSTS,
    agui: ASGIApp | None = None,
) -> WebApp:
    """The inbox and trace pages over ``store``, deciding with ``runner``.

    ``token`` (a fresh random one unless given) is needed by every request, unless
    ``auth`` (``auth(request) -> bool``, sync or async) decides instead. ``capture``
    says whether a run's content (messages, arguments, results) is served; ``None``
    follows telemetry: ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, off when
    unset. ``hosts`` are the ``Host`` names served (127.0.0.1 and localhost unless
    given); ``agui`` is mounted at ``/agui``.
    """
    checked_store = inbox_store(store)  # a 0.2 store lacking list_paused is refused here
    made: object = runner if isinstance(runner, Runner) else runner(store)
    if not isinstance(made, Runner):
        msg = f"runner must be a Runner or make one from the store, got {type(made).__name__}"
        raise TypeError(msg)
    if auth is None and token is None:
        token = new_token()
    checked: object = token
    if checked is not None and (not isinstance(checked, str) or len(checked) < 16):
        msg = "token must be a str of at least 16 characters"
        raise ValueError(msg)
    content = capture_from_env() if capture is None else capture
    inbox = _Inbox(made, checked_store, content)
    routes = [
        Route("/", inbox.page_inbox),
        Route("/trace/{run_id}", inbox.page_trace),
        Route("/api/paused", inbox.paused),
        Route("/api/runs/{run_id}", inbox.run),
        Route("/api/runs/{run_id}/events", inbox.events),
        Route("/api/runs/{run_id}/decide", inbox.decide, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(_STATIC))),
        Mount("/agui", agui if agui is not None else _no_agui),
    ]
    guarded = Guard(Starlette(routes=routes), token=token, auth=auth, hosts=hosts)
    return WebApp(guarded, made, store, token)


async def _no_agui(scope: Scope, receive: Receive, send: Send) -> None:
    response = JSONResponse({"error": "no AG-UI endpoint is mounted on this server"}, 404)
    await response(scope, receive, send)


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


@final
class _Inbox:
    __slots__ = ("_deciding", "_live", "_tasks", "content", "runner", "store")

    def __init__(self, runner: Runner, store: InboxStore, content: bool) -> None:
        self.runner: Final = runner
        self.store: Final = store
        self.content: Final = content
        self._live: Final = LiveRuns()
        self._deciding: Final[set[str]] = set()
        self._tasks: Final[set[asyncio.Task[None]]] = set()  # resumes under way, kept alive

    # -- pages ------------------------------------------------------------------------

    async def page_inbox(self, request: Request) -> Response:
        return _page(request, "inbox.html")

    async def page_trace(self, request: Request) -> Response:
        return _page(request, "trace.html")

    # -- the inbox --------------------------------------------------------------------

    async def paused(self, request: Request) -> Response:
        try:
            runs = await run_in_threadpool(self.store.list_paused)
        except ValueError as exc:  # a damaged paused run: the store names it and its file
            return _error(500, str(exc))
        chains = self._chains(runs)
        pausers = self._pausers(runs)
        schemas = self._schemas(request for run in runs for request in run.pending)
        listed = [paused_json(run, self.content, chains, pausers, schemas) for run in runs]
        return JSONResponse({"runs": listed, "content": self.content})

    def _chains(self, runs: Sequence[PausedRun]) -> dict[str, list[str]]:
        """The ``before_tool`` chain each paused call passed (its agent's, for its tool),
        by request id; explained once per agent and tool."""
        explained: dict[tuple[str, str], list[str]] = {}
        chains: dict[str, list[str]] = {}
        for run in runs:
            for pending in run.pending:
                key = (pending.agent, pending.call.name)
                if key not in explained:
                    try:
                        steps = self.runner.explain(
                            BEFORE_TOOL, tool=pending.call.name, agent=pending.agent
                        ).steps
                    except (ValueError, LookupError, TypeError):  # an agent this runner lacks
                        steps = ()
                    explained[key] = [step.callback for step in steps]
                chains[pending.id] = explained[key]
        return chains

    def _pausers(self, runs: Sequence[PausedRun]) -> dict[str, str]:
        """The callback that paused each request, by request id, where this server saw
        it: a run it resumed that paused again (hook decisions reach the records of
        runs this server drives; a store's records hold a run's events, not its hooks)."""
        found: dict[str, str] = {}
        for run in runs:
            live = self._live.get(run.run_id)
            if live is None:
                continue
            paused_calls = {
                record["call_id"]: record["callback"]
                for record in live.records
                if record["kind"] == "hook"
                and record["outcome"] == "pause"
                and record["callback"] is not None
            }
            for pending in run.pending:
                if pending.call.id in paused_calls:
                    found[pending.id] = paused_calls[pending.call.id]
        return found

    # -- a run's records --------------------------------------------------------------

    async def _records(self, run_id: str) -> list[JSON] | None:
        live = self._live.get(run_id)
        if live is not None:
            return list(live.records)
        text = await run_in_threadpool(self.store.load_records, run_id)
        if text is None:
            return None
        events = load_events(text)  # a damaged record is a ValueError naming its line
        shaped = (record_json(event, self.content) for event in events)
        return [record | {"seq": n} for n, record in enumerate(shaped) if record is not None]

    async def run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        try:
            records = await self._records(run_id)
        except ValueError as exc:
            return _error(500, f"the records of run {run_id[:80]} are damaged: {exc}")
        live = self._live.get(run_id)
        if records is None:
            return _error(404, f"no records of run {run_id[:80]!r} here")
        done = live is None or live.done
        return JSONResponse(
            {"run_id": run_id, "records": records, "live": not done, "content": self.content}
        )

    async def events(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        live = self._live.get(run_id)
        if live is None:
            try:
                records = await self._records(run_id)
            except ValueError as exc:
                return _error(500, f"the records of run {run_id[:80]} are damaged: {exc}")
            if records is None:
                return _error(404, f"no records of run {run_id[:80]!r} here")
            return EventSourceResponse(_replay(records))
        return EventSourceResponse(_follow(live))

    # -- deciding ---------------------------------------------------------------------

    async def decide(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        body = await request.body()
        if len(body) > _MAX_BODY:
            return _error(413, f"a decision body is at most {_MAX_BODY} bytes")
        try:
            parsed: object = json.loads(body)
        except (ValueError, RecursionError):
            return _error(400, "the body is no JSON")
        if run_id in self._deciding:
            return _error(409, f"run {run_id[:80]} is being decided by someone else right now")
        self._deciding.add(run_id)
        keep = False
        try:
            response, keep = await self._decide(run_id, parsed)
        finally:
            if not keep:
                self._deciding.discard(run_id)
        return response

    async def _decide(self, run_id: str, body: object) -> tuple[Response, bool]:
        text = await run_in_threadpool(self.store.load_paused, run_id)
        if text is None:
            return _error(409, f"run {run_id[:80]} is not waiting: it was decided already"), False
        state = RunState.from_json(text)
        try:
            decisions = parse_decisions(body, state.pending, self._schemas(state.pending))
        except BadDecision as exc:
            return _error(422, str(exc)), False
        live = self._live.start(run_id)
        task = asyncio.create_task(self._resume(run_id, state, decisions, live))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        started = asyncio.create_task(live.started.wait())
        await asyncio.wait((task, started), return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        if task.done() and task.exception() is not None:
            self._live.drop(run_id)
            error = task.exception()
            if isinstance(error, (ResumeRefused, SessionBusy)):
                return _error(409, f"run {run_id[:80]} was decided already: {error}"), False
            if isinstance(error, InvalidDecisions):
                return _error(422, str(error)), False
            return _error(500, f"the resume failed: {type(error).__name__}"), False
        return JSONResponse({"run_id": run_id, "trace": f"/trace/{run_id}"}, 202), True

    def _schemas(self, requests: Iterable[PendingRequest]) -> dict[str, Mapping[str, Any]]:
        """The argument schema of the tool each request calls (its agent's), by request id;
        a tool the agent does not list (an MCP server's) has none here."""
        agents = {agent.name: agent for agent in self.runner.agent.walk()}
        schemas: dict[str, Mapping[str, Any]] = {}
        for request in requests:
            agent = agents.get(request.agent)
            for spec in () if agent is None else agent.specs:
                if spec.name == request.call.name:
                    schemas[request.id] = spec.parameters
        return schemas

    async def _resume(self, run_id: str, state: RunState, decisions: Any, live: Live) -> None:
        """Resume the run as a stream: each event and each hook decision (its observer)
        goes to the live record as it happens; a refusal before the run started is raised
        for ``decide`` to answer with."""

        async def told(event: HookEvent) -> None:
            shaped = record_json(event, self.content)
            if shaped is not None:
                live.push(shaped)

        stream = self.runner.resume_stream(state, decisions, callbacks=[observing(told)])
        try:
            async for item in stream:
                shaped = record_json(item, self.content)
                if shaped is None:
                    continue
                if isinstance(item, RunFinishedEvent):
                    live.finish(shaped)
                else:
                    # A stream starts before the resume checks the session's version (a
                    # resume that lost the race to another process is refused after it):
                    # the run goes on from its first hook decision or event after that.
                    live.push(shaped, starts=not isinstance(item, RunStartedEvent))
        except Exception as exc:
            if not live.started.is_set():  # refused before it ran: decide answers with it
                raise
            live.finish({"kind": "failed", "error": type(exc).__name__, "time": 0.0})
        finally:
            self._deciding.discard(run_id)
            await stream.aclose()


def _page(request: Request, name: str) -> Response:
    response = HTMLResponse((_STATIC / name).read_text(encoding="utf-8"))
    response.headers["content-security-policy"] = (
        "default-src 'self'; script-src 'self'; style-src 'self'; frame-ancestors 'none'"
    )
    response.headers["x-content-type-options"] = "nosniff"
    response.headers["referrer-policy"] = "no-referrer"
    set_csrf_cookie(request, response)
    return response


async def _replay(records: Sequence[JSON]) -> AsyncIterator[dict[str, str]]:
    for record in records:
        yield {"event": "record", "data": json.dumps(record)}
    yield {"event": "end", "data": '{"kind": "end"}'}


async def _follow(live: Live) -> AsyncIterator[dict[str, str]]:
    async for record in live.watch():
        yield {"event": "record", "data": json.dumps(record)}
    yield {"event": "end", "data": '{"kind": "end"}'}
