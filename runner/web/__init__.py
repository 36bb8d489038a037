"""hookline in a browser: the approval inbox and the run trace pages (extra ``hookline[web]``).

::

    from runner.web import inbox_app, serve_in_thread

    app = inbox_app(make_runner, store)  # an ASGI app: uvicorn, hypercorn, any server
    with serve_in_thread(make_runner, store) as server:
        print(server.address)  # http://127.0.0.1:PORT/?token=...

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
    import jsonschema as _jsonschema
    import sse_starlette as _sse_starlette
    import starlette as _starlette
    import uvicorn as _uvicorn
except ImportError as _missing:  # pragma: no cover -- the tests run with the extra installed
    _msg = (
        f"runner.web needs the web extra ({_missing.name} is missing): pip install 'hookline[web]'"
    )
    raise ImportError(_msg, name=_missing.name) from _missing

from runner.web._app import RunnerSource, WebApp, inbox_app
from runner.web._security import Auth
from runner.web._serve import Server, serve_in_thread

del _jsonschema, _sse_starlette, _starlette, _uvicorn

__all__ = ["Auth", "RunnerSource", "Server", "WebApp", "inbox_app", "serve_in_thread"]
