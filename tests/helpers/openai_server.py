"""A small OpenAI-compatible server for the tests: scripted replies, every request kept.

``OpenAIServer`` serves ``POST /v1/chat/completions`` on 127.0.0.1 (port 0: a free
one), on its own thread, with HTTP/1.1 keep-alive as real servers do. Each request
takes the next scripted ``Reply`` (a completion, a stream of chunks served as
server-sent events, or an error status with headers); its
JSON body is kept in ``bodies``, its headers (names in lower case) in ``headers``. The
script bounds the requests: once it is used up, the server answers 500 and counts the
request in ``unexpected``, which the ``server`` fixture requires to be 0; past
``max_requests`` it answers 503 to anything. No request ever leaves the machine.

A streamed reply goes out as a real server sends it: ``text/event-stream`` in chunked
transfer encoding, one ``data: {chunk}`` event per chunk, then ``data: [DONE]``. Each
event is written in two halves, flushed apart, so an event (even a character of it: the
JSON is UTF-8, not escaped) arrives split across reads, as over a slow network.

The ``server`` and ``clean_env`` fixtures are in ``tests/conftest.py``. The helpers
build response bodies as the API reference describes them: ``completion``,
``tool_call``, ``error``; and streams: ``chunk``, ``streamed``, and ``as_stream``, which
cuts a completion into chunks at awkward places.
"""

from __future__ import annotations

import collections
import functools
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ENDPOINT = "/v1/chat/completions"
KEEPALIVE_FOR = 5.0
"""The longest a ``keepalive`` reply goes on, so no test can hang on one."""
ENVIRONMENT = (
    "OPENAI_ADMIN_KEY",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_CUSTOM_HEADERS",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
)


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an HTTP status, a JSON body and extra headers.

    With ``events`` (then ``body`` is unused), the answer is a stream: each event is a
    chunk's JSON, sent as a server-sent event, then ``[DONE]`` (unless ``done`` is false:
    a stream cut off, its HTTP body ended cleanly). With ``raw``, the body is those bytes
    exactly (in chunked encoding), as ``content_type`` (the events' data too: ``raw``
    lines are sent as ``data:`` events when ``events`` is given, as they are).

    ``keepalive`` (seconds) makes a server that sends its headers (and its ``events``,
    without ``[DONE]``, if any), then one byte
    (``\n``: JSON whitespace, an empty SSE line) per ``keepalive`` and nothing else, for at
    most ``KEEPALIVE_FOR`` seconds or until the client goes. ``silent`` makes one that
    sends nothing at all for as long, then closes the connection. ``stall`` makes one that
    sends its headers and ``raw`` (a first piece of the body), then nothing, until the
    client hangs up (counted in the server's ``hangups``) or ``KEEPALIVE_FOR`` passes.
    """

    body: Mapping[str, Any]
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    events: Sequence[Mapping[str, Any] | str] | None = None
    done: bool = True
    raw: bytes | None = None
    content_type: str = "application/json"
    keepalive: float | None = None
    silent: bool = False
    stall: bool = False


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    """A function tool call as a completion carries it: ``arguments`` is JSON text."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def completion(
    text: str | None = "",
    *,
    tool_calls: Sequence[Mapping[str, Any]] = (),
    finish_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    model: str = "test-model",
) -> Reply:
    """A ``chat.completion`` with one choice (finish reason ``tool_calls`` or ``stop``)."""
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if tool_calls:
        message["tool_calls"] = list(tool_calls)
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": finish_reason or ("tool_calls" if tool_calls else "stop"),
            }
        ],
    }
    if usage is not None:
        body["usage"] = dict(usage)
    return Reply(body)


def chunk(
    delta: Mapping[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    choices: bool = True,
    model: str = "test-model",
) -> dict[str, Any]:
    """A ``chat.completion.chunk``: one choice with ``delta``, or none (``choices=False``)."""
    body: dict[str, Any] = {
        "id": "chatcmpl-stream",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [],
    }
    if choices:
        choice = {"index": 0, "delta": dict(delta or {}), "finish_reason": finish_reason}
        body["choices"] = [{**choice, "logprobs": None}]
    if usage is not None:
        body["usage"] = dict(usage)
    return body


def streamed(*events: Mapping[str, Any] | str, done: bool = True) -> Reply:
    """A streamed answer: ``events`` (chunks, an ``{"error": ...}`` body, or raw data text)
    as sent, then ``[DONE]`` unless ``done`` is false."""
    return Reply({}, events=events, done=done)


def raw(body: bytes, content_type: str, status: int = 200) -> Reply:
    """An answer of exactly ``body``, said to be ``content_type``."""
    return Reply({}, status, raw=body, content_type=content_type)


def silent() -> Reply:
    """A server that takes the request and never answers (for ``KEEPALIVE_FOR`` seconds)."""
    return Reply({}, silent=True)


def stall(first: bytes, content_type: str = "application/json") -> Reply:
    """A server that sends headers and ``first``, then falls silent until the client goes."""
    return Reply({}, raw=first, content_type=content_type, stall=True)


def keepalive(every: float, content_type: str = "application/json") -> Reply:
    """A server that answers 200 and then only a keep-alive byte every ``every`` seconds."""
    return Reply({}, keepalive=every, content_type=content_type)


def as_stream(reply: Reply, size: int = 3) -> Reply:
    """``reply``'s completion as a server streams it, every piece ``size`` characters.

    A first chunk with the role, the text in pieces (mid-word), each tool call as its id
    and name, then its arguments in pieces (mid-token), a chunk with the finish reason,
    and the usage, if any, in a last chunk with no choices. Every chunk names the
    completion's model.
    """
    (choice,) = reply.body["choices"]
    message = choice["message"]
    text: str = message["content"] or ""
    piece = functools.partial(chunk, model=reply.body["model"])
    events = [piece({"role": "assistant", "content": ""})]
    events += [piece({"content": text[at : at + size]}) for at in range(0, len(text), size)]
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        start = {"index": index, "id": call["id"], "type": "function"}
        events.append(piece({"tool_calls": [{**start, "function": {"name": function["name"]}}]}))
        arguments: str = function["arguments"]
        events += [
            piece({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
            for part in (arguments[at : at + size] for at in range(0, len(arguments), size))
        ]
    events.append(piece({}, finish_reason=choice["finish_reason"]))
    if "usage" in reply.body:
        events.append(piece(usage=reply.body["usage"], choices=False))
    return streamed(*events)


def error(
    status: int, message: str, *, kind: str, code: str | None, headers: Mapping[str, str] = {}
) -> Reply:
    """An API error: ``{"error": {message, type, param, code}}`` with ``status``."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return Reply(body, status, dict(headers))


class OpenAIServer:
    """A Chat Completions endpoint on 127.0.0.1 that answers from a script.

    ``url`` is the base URL to give a client (``http://127.0.0.1:<port>/v1``). Use it
    as a context manager; ``script(*replies)`` adds answers, ``bodies`` holds the JSON
    of every request received, in order. ``always``, if given, answers every request
    once the script is used up (benchmarks); ``max_requests`` still bounds them.
    """

    endpoint = ENDPOINT
    """The one path served (a subclass serves another API's)."""

    def __init__(self, *, max_requests: int = 50, always: Reply | None = None) -> None:
        self.max_requests = max_requests
        self.always = always
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.unexpected = 0
        self.stopped = False
        self.hangups = 0
        self._replies: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self.connections = 0  # the connections accepted: a client that reuses one opens one
        accept = self._httpd.process_request

        def counted(request: Any, address: Any) -> None:
            self.connections += 1  # one thread accepts: no race
            accept(request, address)

        self._httpd.process_request = counted  # type: ignore[method-assign,assignment]

    @property
    def url(self) -> str:
        """The base URL of the API (``.../v1``)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def pending(self) -> int:
        """How many scripted replies are still unanswered."""
        with self._lock:
            return len(self._replies)

    def take(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Reply:
        """Keep the request and give the next reply (500 when the script is used up)."""
        with self._lock:
            self.paths.append(path)
            self.headers.append(headers)
            self.bodies.append(body)
            if len(self.bodies) > self.max_requests:
                self.unexpected += 1
                return error(503, "too many requests for a test", kind="server_error", code=None)
            if path != self.endpoint:
                self.unexpected += 1
                return error(404, f"no route {path}", kind="invalid_request_error", code=None)
            if self._replies:
                return self._replies.popleft()
            if self.always is not None:
                return self.always
            self.unexpected += 1
        return error(500, "the test server's script is used up", kind="server_error", code=None)

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=0.01)  # shutdown waits one poll at most

    def __enter__(self) -> OpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = True  # a silent or keep-alive reply ends at once
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real server
        disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms ACK waits
        timeout = 10  # an idle kept-alive connection frees its thread after this

        def handle(self) -> None:
            """Serve the connection's requests; a client that reset it is simply gone (one
            that stops reading a stream resets it, as clients of real servers do)."""
            try:
                super().handle()
            except ConnectionResetError:
                self.close_connection = True

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"null")
            headers = {name.lower(): value for name, value in self.headers.items()}
            reply = server.take(self.path, headers, body)
            if reply.silent:
                end = time.monotonic() + KEEPALIVE_FOR
                while time.monotonic() < end and not server.stopped:
                    time.sleep(0.01)
                self.close_connection = True
                return
            if reply.stall:
                self.send_stall(reply, reply.raw or b"")
                return
            if reply.keepalive is not None and reply.events is None:
                self.start_chunked(reply, reply.content_type)
                self.send_keepalive(reply.keepalive)
                return
            if reply.raw is not None:
                self.send_raw(reply, reply.raw)
                return
            if reply.events is not None:
                self.send_events(reply, reply.events)
                return
            data = json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def start_chunked(self, reply: Reply, content_type: str) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", content_type)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()

        def send_raw(self, reply: Reply, data: bytes) -> None:
            """Send ``data`` as the whole body, in chunked encoding."""
            self.start_chunked(reply, reply.content_type)
            try:
                if data:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True

        def send_stall(self, reply: Reply, first: bytes) -> None:
            """Send the headers and ``first``, then wait, silent, for the client to go."""
            self.start_chunked(reply, reply.content_type)
            self.close_connection = True
            self.wfile.write(b"%x\r\n%s\r\n" % (len(first), first))
            self.wfile.flush()
            self.connection.settimeout(0.02)
            end = time.monotonic() + KEEPALIVE_FOR
            while time.monotonic() < end and not server.stopped:
                try:
                    if self.connection.recv(1) == b"":
                        with server._lock:  # the server's own lock
                            server.hangups += 1
                        return
                except TimeoutError:
                    continue
                except OSError:
                    return

        def send_keepalive(self, every: float) -> None:
            """Send a byte per ``every`` seconds until the client goes."""
            self.close_connection = True
            end = time.monotonic() + KEEPALIVE_FOR
            try:
                while time.monotonic() < end and not server.stopped:
                    self.wfile.write(b"1\r\n\n\r\n")
                    self.wfile.flush()
                    time.sleep(every)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up: the test is over

        def send_events(self, reply: Reply, events: Sequence[Mapping[str, Any] | str]) -> None:
            """Send ``events`` as server-sent events, each in two halves, then ``[DONE]``."""
            self.start_chunked(reply, "text/event-stream")
            lines = [
                event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
                for event in events
            ] + (["[DONE]"] if reply.done else [])
            try:
                for line in lines:
                    data = f"data: {line}\n\n".encode()
                    half = len(data) // 2  # may cut a UTF-8 character: the client reassembles
                    for piece in (data[:half], data[half:]):
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                        self.wfile.flush()
                if reply.keepalive is not None:
                    self.send_keepalive(reply.keepalive)
                    return
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading: so does the server

        def log_message(self, format: str, *args: Any) -> None:  # `format`: the base's name
            """Quiet: the tests read ``bodies``, not a log."""

    return Handler


def forget_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset every ``OPENAI_*`` setting a client reads, for the rest of the test."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
