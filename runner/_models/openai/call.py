"""One model call's deadline, and what a server's body says when it is no answer.

``Call`` holds a call's total deadline from the moment it starts: the time the request,
the answer's headers and every byte of its body may take, together. The SDK's own
timeout is per read, so a server sending a keep-alive byte every second would hold a
call forever; the model reads the body itself and checks the deadline at every piece.
In ``agenerate`` / ``astream`` every wait runs under ``asyncio.timeout_at``; in
``generate`` / ``stream`` a timer shuts the response's socket at the deadline, so a read
blocked on a silent server ends then.

The rest turns a body that is no answer into a ``ProviderError`` naming the URL, the
model, the status, the content type and the first bytes: a body that is not JSON, JSON
that is no completion, a streamed request answered by something other than an event
stream, an event whose data is not JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import itertools
import json
import logging
import socket
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, cast, final

from runner._errors import ModelTimeout, ProviderError
from runner._models.openai.sse import Event
from runner._models.openai.stream import StreamReader
from runner._models.openai.wire import from_completion

if TYPE_CHECKING:
    import httpx2
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    from hooks import ModelResponse
    from runner._events import TextDelta, ToolCallDelta

__all__ = [
    "HEAD",
    "AsyncBody",
    "Body",
    "Call",
    "adrain",
    "aread_head",
    "drain",
    "is_event_stream",
    "log_left_out",
    "no_event_stream",
    "read_head",
]

_LOG: Final = logging.getLogger("runner")

HEAD: Final = 256
"""How many bytes of a body a ``ProviderError`` quotes."""

# The SDK's and httpx's timeout classes, told by name as `runner._models.transient` does.
_TIMEOUTS: Final = frozenset({"APITimeoutError", "TimeoutException"})


@final
class Call:
    """One model call to ``url``: its deadline, ``seconds`` from now, and its errors."""

    __slots__ = ("_cut", "end", "model", "seconds", "url")

    def __init__(self, model: str, url: str, seconds: float) -> None:
        self.model: Final = model
        self.url: Final = url
        self.seconds: Final = seconds
        self.end: Final = time.monotonic() + seconds
        self._cut = False  # the watchdog shut the socket at the deadline

    def left(self) -> float:
        """Seconds until the deadline (0 once it has passed)."""
        return max(0.0, self.end - time.monotonic())

    def timeout(self, given: object) -> object:
        """The SDK's per-request ``timeout``: the time left, or ``given`` when shorter."""
        left = max(self.left(), 0.001)
        if given is None:
            return left
        if isinstance(given, int | float) and not isinstance(given, bool):
            return min(float(given), left)
        return given  # an httpx Timeout the caller made: theirs

    def check(self) -> None:
        """Raise ``ModelTimeout`` if the deadline has passed."""
        if time.monotonic() >= self.end:
            raise self.timed_out()

    def timed_out(self) -> ModelTimeout:
        """The error of this call passing its deadline."""
        return ModelTimeout(self.model, self.seconds, url=self.url)

    @contextlib.contextmanager
    def guarded(self) -> Generator[None, None, None]:
        """A timeout past the deadline becomes ``ModelTimeout``; a lost connection's
        message names the URL, the model and why; anything else passes unchanged."""
        try:
            yield
        except ModelTimeout:
            raise
        except Exception as error:
            if self._cut:  # whatever a read on the shut socket raised
                raise self.timed_out() from error
            names = {cls.__name__ for cls in type(error).__mro__}
            if (isinstance(error, TimeoutError) or names & _TIMEOUTS) and (
                time.monotonic() >= self.end - 0.005  # a socket's timer may fire a hair early
            ):
                raise self.timed_out() from error
            if "APIConnectionError" in names and len(error.args) == 1:
                # The SDK says only "Connection error.": its message names where and why
                # now, its type (what handlers test) unchanged.
                cause = error.__cause__ or error.__context__
                why = f": {type(cause).__name__}: {cause}" if cause is not None else ""
                said = f"{error.args[0]} model {self.model!r} at {self.url}: no answer{why}"
                error.args = (said,)
                if isinstance(getattr(error, "message", None), str):
                    error.message = said  # type: ignore[attr-defined]  # the SDK's own field
            raise

    @contextlib.contextmanager
    def watching(self, response: httpx2.Response) -> Generator[None, None, None]:
        """While a sync call reads ``response``'s body: at the deadline, shut its socket,
        so that a read waiting on a silent server ends then (the per-read timeout could
        wait longer). Without a socket to shut (a mock transport) the reads' own checks
        and timeouts bound the call."""
        sock = _socket_of(response)
        if sock is None:
            yield
            return

        def cut() -> None:
            self._cut = True
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

        watch = _WATCHDOG.watch(self.end, cut)
        try:
            yield
        finally:
            _WATCHDOG.cancel(watch)

    @contextlib.asynccontextmanager
    async def within(self) -> AsyncGenerator[None, None]:
        """Await under the deadline: ``ModelTimeout`` when it passes, whatever is awaited."""
        loop = asyncio.get_running_loop()
        timer = asyncio.timeout_at(loop.time() + (self.end - time.monotonic()))
        try:
            async with timer:
                yield
        except TimeoutError as error:
            if timer.expired():
                raise self.timed_out() from error
            raise

    def error(
        self,
        problem: str,
        response: httpx2.Response,
        head: bytes | str = b"",
        *,
        transient: bool = False,
    ) -> ProviderError:
        """A ``ProviderError`` about ``response``, quoting the first bytes of ``head``."""
        data = head.encode("utf-8", "replace") if isinstance(head, str) else head
        return ProviderError(
            problem,
            url=str(response.url),
            model=self.model,
            status=response.status_code,
            content_type=response.headers.get("content-type"),
            head=data[:HEAD],
            transient=transient,
        )

    def answer(self, response: httpx2.Response, body: bytes) -> ModelResponse:
        """``body`` as the model's answer, or a ``ProviderError`` saying why it is none."""
        completion = self.completion(response, body)
        try:
            return from_completion(completion)
        except (AttributeError, TypeError) as error:  # a field of the wrong shape
            problem = f"the body is no chat completion: {error}"
            raise self.error(problem, response, body) from error

    def deltas(
        self, response: httpx2.Response, reader: StreamReader, event: Event
    ) -> list[TextDelta | ToolCallDelta]:
        """What ``event`` adds to the answer ``reader`` reads, as deltas."""
        chunk = self.chunk(response, event.name, event.data)
        try:
            return reader.read(chunk)
        except (AttributeError, TypeError) as error:  # a field of the wrong shape
            problem = f"an event's data is no completion chunk: {error}"
            raise self.error(problem, response, event.data) from error

    def completion(self, response: httpx2.Response, body: bytes) -> ChatCompletion:
        """``body`` as a chat completion, or a ``ProviderError`` saying why it is none."""
        from openai.types.chat import ChatCompletion

        data = _object(self.parse(response, body, "the body"))
        choices: object = None if data is None else data.get("choices")
        if data is None or not choices or not isinstance(choices, list):
            raise self.error("the body is no chat completion: it holds no choices", response, body)
        first = _object(cast("list[object]", choices)[0])
        if first is None or _object(first.get("message")) is None:
            raise self.error("the body's first choice holds no message", response, body)
        return ChatCompletion.construct(**_fields(data))

    def chunk(self, response: httpx2.Response, name: str, data: str) -> ChatCompletionChunk:
        """One event's data as a completion chunk; an error event raises ``openai.APIError``
        (as the SDK does), data that is no chunk a ``ProviderError``."""
        import openai
        from openai.types.chat import ChatCompletionChunk

        value = _object(self.parse(response, data.encode("utf-8", "replace"), "an event's data"))
        if value is not None and (value.get("error") or name == "error"):
            body: object = value.get("error") or value
            held = _object(body)
            message: object = None if held is None else held.get("message")
            if not isinstance(message, str) or not message:
                message = "An error occurred during streaming"
            raise openai.APIError(message, response.request, body=body)
        if value is None:
            raise self.error("an event's data is no completion chunk", response, data)
        return ChatCompletionChunk.construct(**_fields(value))

    def parse(self, response: httpx2.Response, body: bytes, what: str) -> object:
        """``body`` (``what`` names it in errors) parsed as JSON; text that is no JSON is a
        ``ProviderError``, transient when it stops short of its end (cut off on the way)."""
        try:
            return json.loads(body)
        except ValueError as error:  # JSONDecodeError, or bytes that are no UTF-8
            # JSON that stops short of its end was cut off on the way: worth a retry.
            cut = isinstance(error, json.JSONDecodeError) and (
                error.pos >= len(error.doc.rstrip()) or error.msg.startswith("Unterminated string")
            )
            raise self.error(f"{what} is no JSON", response, body, transient=cut) from None


@final
class _Watch:
    """One socket to shut at a deadline, unless the call ends first."""

    __slots__ = ("action", "done")

    def __init__(self, action: Callable[[], None]) -> None:
        self.action: Final = action
        self.done = False


@final
class _Watchdog:
    """One daemon thread, started on first use, that runs each ``_Watch`` due at its
    deadline; a watch cancelled first never runs. Firing and cancelling take one lock, so
    a call that ended is never cut. Cancelled watches leave the heap when they reach its
    top, or all at once when they are most of it."""

    __slots__ = ("_cancelled", "_changed", "_heap", "_order", "_thread")

    def __init__(self) -> None:
        self._changed: Final = threading.Condition()
        self._heap: list[tuple[float, int, _Watch]] = []
        self._order: Final = itertools.count()
        self._cancelled = 0
        self._thread: threading.Thread | None = None

    def watch(self, end: float, action: Callable[[], None]) -> _Watch:
        """Run ``action`` at ``end`` (``time.monotonic``), unless cancelled before."""
        watch = _Watch(action)
        with self._changed:
            heapq.heappush(self._heap, (end, next(self._order), watch))
            if self._thread is None or not self._thread.is_alive():  # first, or forked
                self._thread = threading.Thread(
                    target=self._run, name="hookline-model-deadlines", daemon=True
                )
                self._thread.start()
            elif self._heap[0][2] is watch:
                self._changed.notify()  # sooner than the one it waits for
        return watch

    def cancel(self, watch: _Watch) -> None:
        """Never run ``watch``'s action (if it has not run yet)."""
        with self._changed:
            if watch.done:
                return
            watch.done = True
            self._cancelled += 1
            if self._cancelled > 64 and self._cancelled * 2 > len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2].done]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        with self._changed:
            while True:
                while self._heap and self._heap[0][2].done:
                    heapq.heappop(self._heap)
                    self._cancelled = max(0, self._cancelled - 1)
                if not self._heap:
                    self._changed.wait()
                    continue
                wait = self._heap[0][0] - time.monotonic()
                if wait > 0:
                    self._changed.wait(wait)
                    continue
                _, _, watch = heapq.heappop(self._heap)
                watch.done = True
                with contextlib.suppress(Exception):  # nothing may end the thread
                    watch.action()


_WATCHDOG: Final = _Watchdog()


def _socket_of(response: httpx2.Response) -> socket.socket | None:
    """The socket ``response`` is read from, if its transport says (httpx's does)."""
    try:
        stream = response.extensions.get("network_stream")
        info = getattr(stream, "get_extra_info", None)
        sock = info("socket") if callable(info) else None
    except Exception:  # a transport of its own: no socket to tell
        return None
    return sock if isinstance(sock, socket.socket) else None


def _object(value: object) -> dict[str, object] | None:
    """``value`` if it is a JSON object (a dict, as ``json.loads`` makes), else ``None``."""
    return cast("dict[str, object]", value) if isinstance(value, dict) else None


def _fields(data: dict[str, object]) -> dict[str, Any]:
    """``data`` without the one key ``construct`` itself takes."""
    return {key: value for key, value in data.items() if key != "_fields_set"}


GRACE: Final = 1.0
"""Seconds a stream's body is read on after its last event, for its connection's sake."""


def drain(call: Call, response: httpx2.Response, pieces: Iterator[bytes]) -> None:
    """Read what follows a stream's final event -- normally only the body's end -- so
    that the connection goes back to the pool; past ``GRACE`` (or the deadline, if
    sooner) the rest is left and the connection closed. The answer is whole: nothing
    here fails it."""
    grace = Call(call.model, call.url, min(call.left(), GRACE))
    with contextlib.suppress(Exception), grace.watching(response):
        for _ in pieces:
            if grace.left() <= 0:
                break


async def adrain(call: Call, pieces: AsyncIterator[bytes]) -> None:
    """``drain`` for the async client."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(min(call.left(), GRACE)):
            async for _ in pieces:
                pass


class Body(Protocol):
    """What a call reads of an SDK's raw response: the HTTP response and its bytes."""

    @property
    def http_response(self) -> httpx2.Response:
        """The HTTP response (status, headers)."""
        ...

    def iter_bytes(self) -> Iterator[bytes]:
        """The body, as it arrives."""
        ...


class AsyncBody(Protocol):
    """``Body`` of an async client."""

    @property
    def http_response(self) -> httpx2.Response:
        """The HTTP response (status, headers)."""
        ...

    def iter_bytes(self) -> AsyncGenerator[bytes, None]:
        """The body, as it arrives."""
        ...


def is_event_stream(response: httpx2.Response) -> bool:
    """Whether ``response`` says its body is server-sent events."""
    kind = response.headers.get("content-type", "")
    return kind.split(";")[0].strip().lower() == "text/event-stream"


def read_head(pieces: Iterator[bytes], call: Call) -> bytes:
    """The first bytes of a body, read no further than ``HEAD`` (nor past the deadline)."""
    head = b""
    for piece in pieces:
        call.check()
        head += piece
        if len(head) >= HEAD:
            break
    return head


async def aread_head(pieces: AsyncIterator[bytes]) -> bytes:
    """``read_head`` for an async body (the caller bounds it with ``call.within()``)."""
    head = b""
    async for piece in pieces:
        head += piece
        if len(head) >= HEAD:
            break
    return head


def no_event_stream(call: Call, response: httpx2.Response, head: bytes) -> ProviderError:
    """A streamed request answered with something other than server-sent events."""
    if head.lstrip().startswith(b"{"):
        problem = "a streamed request was answered with JSON: the server ignores stream: true"
    else:
        problem = "a streamed request was answered with no event stream"
    return call.error(problem, response, head)


def log_left_out(kind: str, model: str, left_out: Mapping[str, int], why: str) -> None:
    """Say, once per call, how many reasoning parts of which provider ``kind``'s ``model``
    left out of what it sent, and ``why``: never a silent drop."""
    said = ", ".join(f"{count} of {provider!r}" for provider, count in sorted(left_out.items()))
    _LOG.info("%s %r left out reasoning parts (%s): %s", kind, model, said, why)
