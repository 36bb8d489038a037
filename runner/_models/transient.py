"""What an error says about retrying it: is it transient, and how long did the server ask to wait.

Read off the error by duck typing, so no provider's SDK is imported to tell.
``is_transient(error)``:

1. an ``x-should-retry: true`` / ``false`` response header decides (OpenAI's SDKs send
   it, and theirs are the retries hookline turns off);
2. else the error's own ``transient`` attribute, if it is a bool (``ProviderError``);
3. else an HTTP status -- ``status_code`` or ``status``, an int within 100-599, on the
   error or on its ``response`` -- is transient when it is 408 (timeout), 409 (lock
   conflict), 429 (rate limit) or >= 500, and not otherwise (a 400 is not retried); a
   status below 400 decides nothing (the anthropic SDK raises an ``error`` event sent
   mid-stream as ``APIStatusError`` carrying the stream's 200), so step 4 reads its body;
4. else the error body's ``type`` or ``code`` (the error's ``body``, or the ``error``
   object inside it) when it names a server-side failure: ``server_error``,
   ``api_error``, ``overloaded_error``, ``rate_limit_error``, ``rate_limit_exceeded``,
   ``service_unavailable``, ``timeout`` -- an error a server sends mid-stream, as an SSE
   ``error`` event, has a body and no status (the openai SDK raises it as ``APIError``)
   or a 2xx one (the anthropic SDK and ``AnthropicModel``: Anthropic's 529
   ``overloaded_error`` mid-stream is ``{"type": "error", "error": {"type":
   "overloaded_error", ...}}``);
5. else builtin ``TimeoutError`` (``asyncio.TimeoutError`` is the same class) and
   ``ConnectionError`` are, and so is an error with a class named ``APITimeoutError``,
   ``APIConnectionError`` (the openai and anthropic SDKs), ``TimeoutException``,
   ``NetworkError`` or ``RemoteProtocolError`` (httpx) among its bases.

``retry_after(error)`` reads the same headers (the error's ``response.headers``, else
its own ``headers``, case-insensitively): ``retry-after-ms``, else ``retry-after`` in
seconds or as an HTTP date. An attribute that raises when read counts as absent.
"""

from __future__ import annotations

import datetime
import email.utils
import math
import time
from collections.abc import Mapping
from typing import Any, Final, cast

__all__ = ["is_transient", "retry_after"]

_STATUSES: Final = frozenset({408, 409, 429})  # and every status >= 500
# Error body types and codes of a failure on the server's side (OpenAI, Anthropic).
_KINDS: Final = frozenset(
    {
        "api_error",
        "overloaded_error",
        "rate_limit_error",
        "rate_limit_exceeded",
        "server_error",
        "service_unavailable",
        "timeout",
    }
)
_NAMES: Final = frozenset(
    {
        "APIConnectionError",
        "APITimeoutError",
        "NetworkError",
        "RemoteProtocolError",
        "TimeoutException",
    }
)


def is_transient(error: BaseException) -> bool:
    """Whether ``error`` is worth retrying as it is: a timeout, a lost connection, 429, 5xx.

    By an ``x-should-retry`` header, else the HTTP status, else the error's class (the
    rule is in ``runner._models.transient``'s docstring); nothing is imported to tell.
    """
    should = _headers(error).get("x-should-retry", "").strip().lower()
    if should in {"true", "false"}:
        return should == "true"
    own = _attribute(error, "transient")
    if isinstance(own, bool):
        return own
    status = _status(error)
    if status is not None and status >= 400:
        return status in _STATUSES or status >= 500
    if _kinds(error) & _KINDS:
        return True
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    return any(cls.__name__ in _NAMES for cls in type(error).__mro__)


def retry_after(error: BaseException) -> float | None:
    """Seconds the server asked to wait before a retry, from ``error``'s response headers.

    ``retry-after-ms`` (milliseconds), else ``retry-after`` (seconds, or an HTTP date:
    the time left until then, 0 if it has passed). ``None`` when neither is there or
    what is there is malformed (negative, NaN, neither a number nor a date); a number
    too large for a float is ``math.inf``.
    """
    headers = _headers(error)
    milliseconds = _seconds(headers.get("retry-after-ms"))
    if milliseconds is not None:
        return milliseconds / 1000
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        date = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if date.tzinfo is None:  # "-0000": UTC, with no claim about the sender's zone
        date = date.replace(tzinfo=datetime.UTC)
    return max(0.0, date.timestamp() - time.time())


def _attribute(holder: object, name: str) -> object:
    """``holder.name``, or ``None``: a property that raises is no answer, never an error."""
    try:
        return getattr(holder, name, None)
    except Exception:
        return None


def _status(error: BaseException) -> int | None:
    for holder in (error, _attribute(error, "response")):
        for name in ("status_code", "status"):
            value = _attribute(holder, name)
            if isinstance(value, int) and not isinstance(value, bool) and 100 <= value <= 599:
                return value
    return None


def _kinds(error: BaseException) -> set[str]:
    """The ``type`` and ``code`` strings of the error's body (or of its ``error`` object)."""
    body = _mapping(_attribute(error, "body"))
    found: set[str] = set()
    for holder in (body, None if body is None else _mapping(body.get("error"))):
        if holder is not None:
            for name in ("type", "code"):
                value = holder.get(name)
                if isinstance(value, str):
                    found.add(value)
    return found


def _mapping(value: object) -> Mapping[object, object] | None:
    """``value`` if it is a mapping (a JSON object), else ``None``."""
    return cast("Mapping[object, object]", value) if isinstance(value, Mapping) else None


def _headers(error: BaseException) -> Mapping[str, str]:
    """The error's response headers (else its own), keys lower-cased; empty if none."""
    for holder in (_attribute(error, "response"), error):
        items = _attribute(_attribute(holder, "headers"), "items")
        if callable(items):
            try:
                pairs: Any = items()
                return {str(key).lower(): str(value) for key, value in pairs}
            except Exception:  # something called headers that is no mapping: none
                return {}
    return {}


def _seconds(value: str | None) -> float | None:
    """``value`` as a number of seconds >= 0 (``inf`` if too large), else ``None``."""
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    if math.isnan(seconds) or seconds < 0:
        return None
    return seconds
