"""Reading an error for retrying: ``is_transient`` and ``retry_after``, by duck typing."""

from __future__ import annotations

import email.message
import email.utils
import math
import subprocess
import sys
import time
import urllib.error
from collections.abc import Mapping

import anthropic
import httpx2
import openai
import pytest

from runner import ProviderError as RunnerProviderError
from runner import is_transient, retry_after

REQUEST = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")


class FakeResponse:
    """A provider's HTTP response as an SDK keeps it: a status and headers."""

    def __init__(self, status_code: int, headers: Mapping[str, str]) -> None:
        self.status_code = status_code
        self.headers = dict(headers)


class ProviderError(Exception):
    """A provider SDK's status error: ``status_code`` and ``response.headers``."""

    def __init__(self, status_code: int, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.response = FakeResponse(status_code, headers or {})


class OnlyResponse(Exception):
    """An error whose status is on its ``response`` only (as httpx's ``HTTPStatusError``)."""

    def __init__(self, status_code: int) -> None:
        super().__init__(f"HTTP {status_code}")
        self.response = FakeResponse(status_code, {})


class StatusError(Exception):
    """An error with a ``status`` attribute (as aiohttp's ``ClientResponseError``)."""

    def __init__(self, status: object) -> None:
        super().__init__(f"status {status!r}")
        self.status = status


class APITimeoutError(Exception):
    """A provider's timeout, recognised by its class name alone."""


class SlowModelTimeout(APITimeoutError):
    """A subclass: the name is found among the bases."""


class Unreadable(Exception):
    """An error whose ``response`` and ``headers`` raise when read."""

    @property
    def response(self) -> object:
        """Raises, as httpx's ``request`` does when it was never set."""
        raise RuntimeError("no response")

    @property
    def headers(self) -> object:
        """Raises too."""
        raise RuntimeError("no headers")


class BadHeaders(Exception):
    """An error whose ``headers`` has an ``items`` that fails."""

    class _Headers:
        def items(self) -> object:
            raise ValueError("not a mapping")

    headers = _Headers()


def openai_status(status: int, headers: Mapping[str, str] | None = None) -> openai.APIStatusError:
    """The openai SDK's own error for an HTTP ``status``, over a real ``httpx2.Response``."""
    kinds: dict[int, type[openai.APIStatusError]] = {
        400: openai.BadRequestError,
        401: openai.AuthenticationError,
        409: openai.ConflictError,
        422: openai.UnprocessableEntityError,
        429: openai.RateLimitError,
        500: openai.InternalServerError,
        503: openai.InternalServerError,
    }
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    return kinds[status](f"Error code: {status}", response=response, body=None)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503, 504, 529])
def test_transient_statuses(status: int) -> None:
    """408, 409, 429 and every 5xx are transient, on ``status_code`` or ``response``."""
    assert is_transient(ProviderError(status))
    assert is_transient(OnlyResponse(status))


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_other_statuses_are_not_transient(status: int) -> None:
    """Any other status is not transient: the same request would fail the same way."""
    assert not is_transient(ProviderError(status))
    assert not is_transient(OnlyResponse(status))


def test_a_status_attribute_counts_when_it_is_an_http_status() -> None:
    """``status`` is read like ``status_code``, but only an int within 100-599 counts."""
    assert is_transient(StatusError(503))
    assert not is_transient(StatusError(404))
    for odd in (True, 7, 600, "503", None):
        assert not is_transient(StatusError(odd))


def test_the_status_decides_before_the_class() -> None:
    """A timeout class with a 400 status is not transient: the server's answer wins."""

    class TimeoutWithStatus(TimeoutError):
        status_code = 400

    assert not is_transient(TimeoutWithStatus())


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError("slow"),
        ConnectionError("down"),
        ConnectionResetError("reset"),
        ConnectionRefusedError("refused"),
        BrokenPipeError("pipe"),
        APITimeoutError("by name"),
        SlowModelTimeout("by a base's name"),
    ],
    ids=repr,
)
def test_transient_classes(error: Exception) -> None:
    """Builtin timeouts and lost connections, and the SDKs' class names, are transient."""
    assert is_transient(error)


@pytest.mark.parametrize(
    "error",
    [ValueError("bad"), PermissionError("revoked"), OSError("disk"), KeyError("k")],
    ids=repr,
)
def test_other_classes_are_not_transient(error: Exception) -> None:
    """Anything else is not transient."""
    assert not is_transient(error)


def test_x_should_retry_decides_first() -> None:
    """``x-should-retry`` overrides the status both ways; other values are ignored."""
    assert not is_transient(ProviderError(429, {"x-should-retry": "false"}))
    assert is_transient(ProviderError(400, {"X-Should-Retry": " TRUE "}))
    assert is_transient(ProviderError(429, {"x-should-retry": "maybe"}))


def test_attributes_that_raise_count_as_absent() -> None:
    """A ``response`` or ``headers`` that raises when read is no answer, never an error."""
    assert not is_transient(Unreadable())
    assert retry_after(Unreadable()) is None
    assert not is_transient(BadHeaders())
    assert retry_after(BadHeaders()) is None


def test_the_openai_sdks_own_errors() -> None:
    """The real openai classes are read as the fakes are, without the runner importing them."""
    assert is_transient(openai_status(429))
    assert is_transient(openai_status(500))
    assert is_transient(openai_status(503))
    assert is_transient(openai_status(409))
    assert is_transient(openai.APITimeoutError(request=REQUEST))
    assert is_transient(openai.APIConnectionError(request=REQUEST))
    assert not is_transient(openai_status(400))
    assert not is_transient(openai_status(401))
    assert not is_transient(openai_status(422))
    assert not is_transient(openai_status(429, {"x-should-retry": "false"}))


def test_httpx_errors() -> None:
    """httpx's transport errors and its status error are read by name and by response."""
    assert is_transient(httpx2.ConnectTimeout("slow", request=REQUEST))
    assert is_transient(httpx2.ReadError("reset", request=REQUEST))
    assert is_transient(httpx2.RemoteProtocolError("closed", request=REQUEST))
    assert not is_transient(httpx2.UnsupportedProtocol("ftp", request=REQUEST))
    busy = httpx2.Response(503, request=REQUEST)
    assert is_transient(httpx2.HTTPStatusError("busy", request=REQUEST, response=busy))
    gone = httpx2.Response(404, request=REQUEST)
    assert not is_transient(httpx2.HTTPStatusError("gone", request=REQUEST, response=gone))


def test_urllib_http_errors() -> None:
    """urllib's ``HTTPError`` carries ``status`` and its own ``headers``: both are read."""
    headers = email.message.Message()
    headers["Retry-After"] = "3"
    error = urllib.error.HTTPError("https://example.com", 503, "busy", headers, None)
    assert is_transient(error)
    assert retry_after(error) == 3.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after": "0"}, 0.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after-ms": "soon", "retry-after": "9"}, 9.0),
        ({"retry-after": "1e400"}, math.inf),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-1"}, None),
        ({"retry-after": "nan"}, None),
        ({"retry-after-ms": "-5"}, None),
        ({}, None),
    ],
)
def test_retry_after_in_seconds_and_milliseconds(
    headers: dict[str, str], seconds: float | None
) -> None:
    """``retry-after-ms`` first, then ``retry-after`` seconds; malformed values are ignored."""
    assert retry_after(ProviderError(429, headers)) == seconds


def test_retry_after_as_an_http_date() -> None:
    """An HTTP date is the time left until then; a date past is 0."""
    soon = email.utils.formatdate(time.time() + 20, usegmt=True)
    wait = retry_after(ProviderError(429, {"retry-after": soon}))
    assert wait is not None
    assert 18 <= wait <= 20
    past = email.utils.formatdate(time.time() - 60, usegmt=True)
    assert retry_after(ProviderError(429, {"retry-after": past})) == 0.0


def test_retry_after_date_without_a_zone_is_utc() -> None:
    """A ``-0000`` date (no zone claimed) is read as UTC, not as local time."""
    soon = email.utils.formatdate(time.time() + 20)  # ends in "-0000"
    assert soon.endswith("-0000")
    wait = retry_after(ProviderError(429, {"retry-after": soon}))
    assert wait is not None
    assert 18 <= wait <= 20


def test_retry_after_without_headers() -> None:
    """An error with no response and no headers asked for no wait."""
    assert retry_after(TimeoutError("slow")) is None
    assert retry_after(openai.APITimeoutError(request=REQUEST)) is None


def test_retry_after_from_the_openai_sdks_errors() -> None:
    """The real ``RateLimitError``'s ``httpx2`` headers are read, case-insensitively."""
    assert retry_after(openai_status(429, {"Retry-After": "2"})) == 2.0
    assert retry_after(openai_status(429, {"retry-after-ms": "1500"})) == 1.5
    assert retry_after(openai_status(429)) is None


@pytest.mark.subprocess
def test_importing_runner_imports_no_provider_sdk() -> None:
    """``import runner`` (and its handlers) loads neither openai nor httpx2, nor the mcp SDK."""
    code = (
        "import sys, runner; "
        "sdks = {'openai', 'httpx2', 'httpx', 'mcp', 'mcp_types'}; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in sdks))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize(
    "body",
    [
        {"message": "overloaded", "type": "server_error", "code": None},
        {"message": "slow down", "type": "requests", "code": "rate_limit_exceeded"},
        {"error": {"type": "overloaded_error", "message": "Overloaded"}},
        {"type": "error", "error": {"type": "api_error", "message": "Internal error"}},
    ],
)
def test_an_error_body_naming_a_server_failure_is_transient(body: dict[str, object]) -> None:
    """An error a server sent mid-stream has a body and no status (the SDK's ``APIError``):
    its ``type`` or ``code`` (or its ``error`` object's) naming a server failure decides."""
    assert is_transient(openai.APIError("failed mid-stream", REQUEST, body=body))


@pytest.mark.parametrize(
    "body",
    [
        None,
        "server_error",
        {"message": "bad", "type": "invalid_request_error", "code": "invalid_value"},
        {"error": "server_error"},
        {"type": 500},
    ],
)
def test_other_error_bodies_are_not_transient(body: object) -> None:
    """A body naming a fault of the request, or none, or no mapping: not transient."""
    assert not is_transient(openai.APIError("failed mid-stream", REQUEST, body=body))


def test_a_status_decides_before_the_body() -> None:
    """A 400 whose body says ``server_error`` is not retried: the status is the server's word."""
    response = httpx2.Response(400, request=REQUEST)
    body = {"type": "server_error"}
    assert not is_transient(openai.BadRequestError("bad", response=response, body=body))


def test_an_errors_own_transient_flag_decides_before_its_status() -> None:
    """``ProviderError.transient`` says it: a cut-off stream answered 200, and is transient."""
    cut = RunnerProviderError("cut off", url="u", model="m", status=200, transient=True)
    html = RunnerProviderError("html", url="u", model="m", status=200, transient=False)
    assert is_transient(cut)
    assert not is_transient(html)


ANTHROPIC_REQUEST = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")


def anthropic_status(
    status: int, kind: str, headers: Mapping[str, str] | None = None
) -> anthropic.APIStatusError:
    """The anthropic SDK's own error class for an HTTP ``status`` (``APIStatusError`` for
    a 200: an ``error`` event mid-stream), over a real ``httpx2.Response``."""
    kinds: dict[int, type[anthropic.APIStatusError]] = {
        400: anthropic.BadRequestError,
        401: anthropic.AuthenticationError,
        403: anthropic.PermissionDeniedError,
        404: anthropic.NotFoundError,
        408: anthropic.RequestTimeoutError,
        409: anthropic.ConflictError,
        413: anthropic.ContentTooLargeError,
        429: anthropic.RateLimitError,
        500: anthropic.InternalServerError,
        503: anthropic.ServiceUnavailableError,
        504: anthropic.GatewayTimeoutError,
        529: anthropic.OverloadedError,
    }
    body = {"type": "error", "error": {"type": kind, "message": "m"}}
    response = httpx2.Response(status, headers=headers, json=body, request=ANTHROPIC_REQUEST)
    error_class = kinds.get(status, anthropic.APIStatusError)
    return error_class(f"Error code: {status}", response=response, body=body)


@pytest.mark.parametrize(
    ("status", "kind", "transient"),
    [
        (429, "rate_limit_error", True),
        (529, "overloaded_error", True),
        (500, "api_error", True),
        (503, "api_error", True),
        (504, "timeout_error", True),
        (408, "timeout_error", True),
        (409, "conflict_error", True),
        (400, "invalid_request_error", False),
        (401, "authentication_error", False),
        (403, "permission_error", False),
        (404, "not_found_error", False),
        (413, "request_too_large", False),
    ],
)
def test_the_anthropic_sdks_status_errors(status: int, kind: str, transient: bool) -> None:
    """429, 408, 409, 5xx and 529 ``overloaded_error`` are retried; the client's faults not."""
    error = anthropic_status(status, kind)
    assert error.status_code == status
    assert is_transient(error) is transient
    if status == 529:
        assert isinstance(error, anthropic.OverloadedError)


def test_the_anthropic_sdks_connection_errors_and_retry_after() -> None:
    """Timeouts and dropped connections are transient; retry-after is read off a 429."""
    assert is_transient(anthropic.APITimeoutError(request=ANTHROPIC_REQUEST))
    assert is_transient(anthropic.APIConnectionError(request=ANTHROPIC_REQUEST))
    assert retry_after(anthropic_status(429, "rate_limit_error", {"retry-after": "12"})) == 12.0
    assert retry_after(anthropic_status(529, "overloaded_error")) is None
    assert not is_transient(anthropic_status(529, "overloaded_error", {"x-should-retry": "false"}))


@pytest.mark.parametrize(
    ("kind", "transient"),
    [
        ("overloaded_error", True),
        ("api_error", True),
        ("rate_limit_error", True),
        ("invalid_request_error", False),
    ],
)
def test_an_anthropic_error_event_mid_stream_is_read_by_its_body(
    kind: str, transient: bool
) -> None:
    """The SDK raises an ``error`` event as ``APIStatusError`` with the stream's 200: the
    status says nothing, the body's ``error.type`` decides."""
    error = anthropic_status(200, kind)
    assert error.status_code == 200
    assert is_transient(error) is transient
