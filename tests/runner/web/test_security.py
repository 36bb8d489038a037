"""Safe by default: the token or the auth hook on every request, the host, CSRF on changes."""

from __future__ import annotations

import asyncio

import pytest
from starlette.requests import Request
from starlette.testclient import TestClient

from examples.web_inbox import make_runner
from runner import RunResult, SQLiteSessionStore
from runner.web import WebApp, inbox_app
from tests.runner.web.conftest import TOKEN

BASE = "http://127.0.0.1"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def client(app: WebApp) -> TestClient:
    return TestClient(app, base_url=BASE, follow_redirects=False)


@pytest.mark.parametrize("path", ["/", "/trace/x", "/api/paused", "/api/runs/x", "/static/app.js"])
def test_every_route_needs_the_token(app: WebApp, path: str) -> None:
    """Without the token, or with another one, every route answers 401 and nothing else."""
    with client(app) as c:
        assert c.get(path).status_code == 401
        assert c.get(path, headers={"Authorization": "Bearer " + "x" * 32}).status_code == 401
        assert c.get(path, headers={"Cookie": "hookline_token=" + "x" * 32}).status_code == 401
        assert c.get(path, headers=BEARER).status_code != 401


def test_a_fresh_token_is_made_and_printed_in_the_address(store: SQLiteSessionStore) -> None:
    """Without a token given the app makes a long random one; two apps never share it."""
    first, second = inbox_app(make_runner, store), inbox_app(make_runner, store)
    assert first.token is not None
    assert second.token is not None
    assert len(first.token) >= 32
    assert first.token != second.token


def test_the_token_in_the_address_becomes_a_cookie(app: WebApp) -> None:
    """``/?token=`` sets an HttpOnly SameSite cookie and a CSRF cookie, then redirects
    to the page without the token; a wrong one is refused."""
    with client(app) as c:
        assert c.get("/?token=" + "x" * 32).status_code == 401
        login = c.get(f"/trace/r1?token={TOKEN}&x=1")
        assert login.status_code == 303
        assert login.headers["location"] == "/trace/r1?x=1"
        cookies = login.headers.get_list("set-cookie")
        token_cookie = next(each for each in cookies if each.startswith("hookline_token="))
        assert "httponly" in token_cookie.lower()
        assert "samesite=strict" in token_cookie.lower()
        assert any(each.startswith("hookline_csrf=") for each in cookies)
        page = c.get("/")
        assert page.status_code == 200
        assert "default-src 'self'" in page.headers["content-security-policy"]


def test_another_host_name_is_refused(app: WebApp) -> None:
    """A request naming another host (DNS rebinding) is refused even with the token."""
    with TestClient(app, base_url="http://evil.example") as c:
        assert c.get("/api/paused", headers=BEARER).status_code == 421


def _logged_in(c: TestClient) -> str:
    c.get(f"/?token={TOKEN}")
    csrf = c.cookies.get("hookline_csrf")
    assert csrf
    return csrf


def test_a_change_by_cookie_needs_the_csrf_header(app: WebApp, paused: RunResult) -> None:
    """A POST authenticated by the cookie needs the CSRF cookie's value in the header,
    and an Origin, when sent, must be the server's own."""
    path = f"/api/runs/{paused.run_id}/decide"
    with client(app) as c:
        csrf = _logged_in(c)
        assert c.post(path, json={}).status_code == 403
        assert c.post(path, json={}, headers={"X-Hookline-CSRF": "x" + csrf}).status_code == 403
        other = {"X-Hookline-CSRF": csrf, "Origin": "http://evil.example"}
        assert c.post(path, json={}, headers=other).status_code == 403
        own = {"X-Hookline-CSRF": csrf, "Origin": BASE}
        assert c.post(path, json={}, headers=own).status_code == 422  # past the checks


def test_a_change_by_bearer_header_needs_no_csrf(app: WebApp, paused: RunResult) -> None:
    """A request carrying the token in its Authorization header is no browser's cookie ride."""
    with client(app) as c:
        assert (
            c.post(f"/api/runs/{paused.run_id}/decide", json={}, headers=BEARER).status_code == 422
        )


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_an_auth_hook_replaces_the_token(
    store: SQLiteSessionStore, paused: RunResult, is_async: bool
) -> None:
    """The application's auth hook decides each request (sync or async); no token is made."""

    def allowed(request: Request) -> bool:
        return request.headers.get("x-user") == "ann"

    async def allowed_async(request: Request) -> bool:
        await asyncio.sleep(0)
        return allowed(request)

    app = inbox_app(make_runner, store, auth=allowed_async if is_async else allowed)
    assert app.token is None
    with client(app) as c:
        assert c.get("/api/paused").status_code == 401
        assert c.get("/api/paused", headers=BEARER).status_code == 401
        assert c.get("/api/paused", headers={"x-user": "ann"}).status_code == 200
        decided = c.post(f"/api/runs/{paused.run_id}/decide", json={}, headers={"x-user": "ann"})
        assert decided.status_code == 403  # CSRF still applies to cookie-less auth hooks


def test_a_short_token_is_refused(store: SQLiteSessionStore) -> None:
    """A token that is too short to be a secret is refused when the app is made."""
    with pytest.raises(ValueError, match="at least 16"):
        inbox_app(make_runner, store, token="short")
