"""hookline over the web (extra ``hookline[web]``): the approval inbox and the run trace
pages in a browser, and the AG-UI endpoint.

::

    from runner.web import agui_app, inbox_app, serve_in_thread

    app = inbox_app(make_runner, store)  # an ASGI app: uvicorn, hypercorn, any server
    with serve_in_thread(make_runner, store) as server:
        print(server.address)  # http://127.0.0.1:PORT/?token=...
    endpoint = agui_app(runner)  # POST an AG-UI RunAgentInput, read its events

or from a shell: ``python -m runner.web --store sessions.db --agent package.module:agent``.
The inbox lists every paused run of the store (``SessionStore.list_paused``), with each
request's reason, the hook that paused it and the call; a person approves, edits,
rejects or answers, and the run resumes in the server, its trace live on the trace page.
Safe by default: 127.0.0.1, a token on every request (or the application's ``auth``
hook), CSRF-checked changes, no run content unless capture is on (docs/web.md).

Importing ``hooks`` or ``runner`` never imports this package or what it needs.
"""

from __future__ import annotations

try:
    import ag_ui as _ag_ui
    import jsonschema as _jsonschema
    import sse_starlette as _sse_starlette
    import starlette as _starlette
    import uvicorn as _uvicorn
except ImportError as _missing:  # pragma: no cover -- the tests run with the extra installed
    _msg = (
        f"runner.web needs the web extra ({_missing.name} is missing): pip install 'hookline[web]'"
    )
    raise ImportError(_msg, name=_missing.name) from _missing

from runner.web._agui import AGUIApp, agui_app
from runner.web._app import RunnerSource, WebApp, inbox_app
from runner.web._security import Auth
from runner.web._serve import Server, serve_in_thread

del _ag_ui, _jsonschema, _sse_starlette, _starlette, _uvicorn

__all__ = [
    "AGUIApp",
    "Auth",
    "RunnerSource",
    "Server",
    "WebApp",
    "agui_app",
    "inbox_app",
    "serve_in_thread",
]
