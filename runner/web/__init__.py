"""hookline over the web (extra ``hookline[web]``): the AG-UI endpoint.

::

    from runner.web import agui_app

    app = agui_app(runner)  # an ASGI app: POST an AG-UI RunAgentInput, read its events

Importing ``hooks`` or ``runner`` never imports this package or what it needs.
"""

from __future__ import annotations

try:
    import ag_ui as _ag_ui
except ImportError as _missing:  # pragma: no cover -- the tests run with the extra installed
    _msg = (
        f"runner.web needs the web extra ({_missing.name} is missing): pip install 'hookline[web]'"
    )
    raise ImportError(_msg, name=_missing.name) from _missing

from runner.web._agui import AGUIApp, agui_app

del _ag_ui

__all__ = ["AGUIApp", "agui_app"]
