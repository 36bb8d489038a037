"""``Call`` on its own: the SDK timeout it gives, its deadline check, the errors it
rewrites or lets pass, the event data it refuses, and the watchdog's housekeeping."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import httpx2
import openai
import pytest

from runner import ModelTimeout, ProviderError
from runner._models.openai import call as call_module
from runner._models.openai.call import Call, _Watchdog  # pyright: ignore[reportPrivateUsage]

_URL = "http://127.0.0.1:9/v1"


def _call(seconds: float = 3600.0) -> Call:
    return Call("test-model", _URL, seconds)


def _response() -> httpx2.Response:
    return httpx2.Response(
        200,
        headers={"content-type": "text/event-stream"},
        request=httpx2.Request("POST", _URL + "/chat/completions"),
    )


def test_the_sdk_timeout_is_the_time_left_or_the_callers_when_sooner(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No timeout given: the time left; a number: the smaller of it and the time left;
    anything else (an httpx Timeout, a bool) is the caller's, passed on as given. The
    clock is held still: the time left is exactly what the deadline gave."""
    monkeypatch.setattr("runner._models.openai.call.time.monotonic", lambda: 1000.0)
    call = _call(3600.0)
    assert call.timeout(None) == 3600.0
    assert call.timeout(5) == 5.0
    assert call.timeout(7200.0) == 3600.0
    assert call.timeout(True) is True
    theirs = httpx2.Timeout(10.0)
    assert call.timeout(theirs) is theirs
    assert _call(0.0).timeout(None) == 0.001


def test_check_raises_model_timeout_once_the_deadline_passed() -> None:
    """A call whose deadline passed raises ``ModelTimeout`` naming the model; one with
    time left does not."""
    _call(3600.0).check()
    with pytest.raises(ModelTimeout, match="test-model"):
        _call(0.0).check()


class APIConnectionError(Exception):  # named as the SDK's class, as ``guarded`` tells it
    """A connection error without the SDK's ``message`` field."""


def test_a_lost_connection_without_a_message_field_is_named_in_its_args() -> None:
    """The connection error's message names the model and the URL; an error of that name
    with no ``message`` field of its own gets none."""
    with pytest.raises(APIConnectionError) as raised, _call().guarded():
        raise APIConnectionError("Connection error.")
    assert raised.value.args == (f"Connection error. model 'test-model' at {_URL}: no answer",)
    assert not hasattr(raised.value, "message")


def test_async_a_timeout_not_the_deadlines_passes_unchanged() -> None:
    """Under ``within``, a ``TimeoutError`` raised before the deadline is not the call's
    timeout: it passes as it was."""

    async def go() -> None:
        async with _call(3600.0).within():
            raise TimeoutError("someone else's")

    with pytest.raises(TimeoutError, match="someone else's"):
        asyncio.run(go())


@pytest.mark.parametrize("body", ['{"error": {"message": 5}}', '{"error": "plain"}'])
def test_an_error_event_without_a_text_message_says_streaming_failed(body: str) -> None:
    """An error event whose message is no text raises the SDK's ``APIError`` with its
    generic message, the body kept."""
    with pytest.raises(openai.APIError, match="An error occurred during streaming") as raised:
        _call().chunk(_response(), "message", body)
    assert raised.value.body is not None


@pytest.mark.parametrize("data", ["[1, 2]", "3", '"text"'])
def test_event_data_that_is_no_object_is_a_provider_error(data: str) -> None:
    """JSON that is no object is no completion chunk: a ``ProviderError`` quoting it."""
    with pytest.raises(ProviderError, match="an event's data is no completion chunk") as raised:
        _call().chunk(_response(), "message", data)
    assert raised.value.head == data.encode()


def test_a_transport_that_fails_to_say_its_socket_has_none() -> None:
    """A network stream whose ``get_extra_info`` raises tells no socket: the call reads
    without a watchdog."""

    class Broken:
        def get_extra_info(self, name: str) -> Any:
            raise RuntimeError("no such info")

    response = _response()
    response.extensions["network_stream"] = Broken()
    assert call_module._socket_of(response) is None  # pyright: ignore[reportPrivateUsage]
    with _call().watching(response):
        pass


def test_cancelled_watches_leave_the_heap_when_they_are_most_of_it() -> None:
    """Past 64 cancelled watches making up most of the heap, they are dropped at once; the
    watches still waiting stay, and none of the cancelled ever runs."""
    watchdog = _Watchdog()
    ran = threading.Event()
    far = time.monotonic() + 3600.0
    watches = [watchdog.watch(far + i, ran.set) for i in range(100)]
    with watchdog._changed:  # pyright: ignore[reportPrivateUsage]  # the thread pops none meanwhile
        for watch in watches[:65]:
            watchdog.cancel(watch)
    heap: list[tuple[float, int, Any]] = watchdog._heap  # pyright: ignore[reportPrivateUsage]
    assert {id(entry[2]) for entry in heap} == {id(watch) for watch in watches[65:]}
    assert all(not entry[2].done for entry in heap)
    assert watchdog._cancelled == 0  # pyright: ignore[reportPrivateUsage]
    for watch in watches[65:]:
        watchdog.cancel(watch)
    assert not ran.is_set()
