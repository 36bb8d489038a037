"""Who may ask the inbox anything, and which requests may change something.

Every request needs the server's token or the application's ``auth`` hook's yes:

- the token (``secrets.token_urlsafe(32)`` unless given) comes as ``Authorization:
  Bearer <token>``, or as the ``hookline_token`` cookie that a first visit to
  ``/?token=<token>`` sets (``HttpOnly``, ``SameSite=Strict``) before redirecting to
  the same page without the token in its address;
- an ``auth`` hook (``auth(request) -> bool``, sync or async) replaces the token: it
  says yes or no to each request as the application's own login does.

State-changing requests (every method but GET, HEAD and OPTIONS) are CSRF-checked by
double submit: the page's script sends the ``hookline_csrf`` cookie's value back in the
``X-Hookline-CSRF`` header, which another site's page can neither read nor set; a
request authenticated by the ``Authorization`` header (no cookie is involved) needs
none. An ``Origin`` header, when sent, must be the server's own origin too. The ``Host``
header must name one of ``hosts`` (DNS rebinding: a page of another name resolving to
127.0.0.1 is refused).
"""

from __future__ import annotations

import hmac
import inspect
import secrets
from collections.abc import Awaitable, Callable, Collection
from typing import Final, TypeAlias, final
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "CSRF_COOKIE",
    "CSRF_HEADER",
    "LOCAL_HOSTS",
    "TOKEN_COOKIE",
    "Auth",
    "Guard",
    "new_token",
]

Auth: TypeAlias = Callable[[Request], bool | Awaitable[bool]]
"""An application's say on a request: ``True`` lets it in (sync or async)."""

TOKEN_COOKIE: Final = "hookline_token"
CSRF_COOKIE: Final = "hookline_csrf"
CSRF_HEADER: Final = "x-hookline-csrf"
LOCAL_HOSTS: Final = frozenset(("127.0.0.1", "localhost", "[::1]"))
_SAFE: Final = frozenset(("GET", "HEAD", "OPTIONS"))


def new_token() -> str:
    """A fresh random token (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def _same(given: str | None, expected: str) -> bool:
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def _host_name(host: str) -> str:
    """``host`` without its port (``[::1]:80`` -> ``[::1]``)."""
    if host.startswith("["):
        return host[: host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@final
class Guard:
    """ASGI middleware: the token (or ``auth``), the host and the CSRF checks before ``app``."""

    __slots__ = ("_app", "_auth", "_hosts", "_token")

    def __init__(
        self, app: ASGIApp, *, token: str | None, auth: Auth | None, hosts: Collection[str]
    ) -> None:
        self._app: Final = app
        self._token: Final = token
        self._auth: Final = auth
        self._hosts: Final = frozenset(host.lower() for host in hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Let ``scope`` through to the app, or answer it with a refusal."""
        if scope["type"] not in ("http", "websocket"):
            await self._app(scope, receive, send)
            return
        request = Request(scope)
        refusal = await self._refusal(request)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self._app(scope, receive, send)

    async def _refusal(self, request: Request) -> Response | None:
        host = _host_name(request.headers.get("host", "")).lower()
        if self._hosts and host not in self._hosts:
            return _refuse(421, f"host {host!r} is not served here")
        by_header = False
        if self._auth is not None:
            allowed = self._auth(request)
            if inspect.isawaitable(allowed):
                allowed = await allowed
            if allowed is not True:
                return _refuse(401, "not allowed: the application's auth hook said no")
        else:
            assert self._token is not None  # one of the two is always set
            login = request.query_params.get("token")
            if login is not None and request.method == "GET":
                return self._login(request, login)
            bearer = request.headers.get("authorization", "")
            by_header = bearer.startswith("Bearer ") and _same(bearer[7:], self._token)
            if not by_header and not _same(request.cookies.get(TOKEN_COOKIE), self._token):
                return _refuse(401, "a token is needed: open the address the server printed")
        if request.method in _SAFE or by_header:
            return None
        return _csrf_refusal(request)

    def _login(self, request: Request, login: str) -> Response:
        assert self._token is not None
        if not _same(login, self._token):
            return _refuse(401, "wrong token: open the address the server printed")
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = request.url.path + (f"?{urlencode(rest)}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(TOKEN_COOKIE, self._token, httponly=True, samesite="strict")
        set_csrf_cookie(request, response)
        return response


def set_csrf_cookie(request: Request, response: Response) -> None:
    """Give the browser a CSRF cookie if it has none (its script reads and echoes it)."""
    if not request.cookies.get(CSRF_COOKIE):
        response.set_cookie(CSRF_COOKIE, new_token(), httponly=False, samesite="strict")


def _csrf_refusal(request: Request) -> Response | None:
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        return _refuse(403, f"cross-site request refused: origin {origin!r} is not this server")
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not _same(request.headers.get(CSRF_HEADER), cookie):
        return _refuse(
            403, "CSRF check failed: send the hookline_csrf cookie's value as X-Hookline-CSRF"
        )
    return None


def _refuse(status: int, message: str) -> Response:
    return JSONResponse({"error": message}, status_code=status)
