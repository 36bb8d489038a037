"""A small Anthropic Messages API server for the tests: scripted replies, every request kept.

``AnthropicServer`` serves ``POST /v1/messages`` on 127.0.0.1 (port 0: a free one), on
its own thread, with HTTP/1.1 keep-alive as the real API does. Each request takes the
next scripted ``Reply``: a message (JSON), a stream of events served as server-sent
events (``event: <type>`` then ``data: <json>``, as the API sends them), raw bytes, an
error status with headers, or a server that never answers. Its JSON body is kept in
``bodies``, its headers (names in lower case) in ``headers``. Once the script is used
up the server answers 500 and counts the request in ``unexpected``, which the
``anthropic_server`` fixture requires to be 0; past ``max_requests`` it answers 529 to
anything. No request ever leaves the machine; every server thread ends within
``KEEPALIVE_FOR`` seconds of the test, or at once when the server stops.

Each event is written in two halves, flushed apart, so an event (even a UTF-8 character
of it) arrives split across reads, as over a slow network. The builders follow the API
reference (https://docs.anthropic.com/en/api/messages, .../messages-streaming):
``message`` and its blocks (``text``, ``tool_use``, ``thinking``, ``redacted``),
``as_stream`` (a message cut into events at awkward places: text mid-word, a tool's input
JSON mid-token, thinking and its signature in pieces), ``error``.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

ENDPOINT = "/v1/messages"
KEEPALIVE_FOR = 5.0
"""The longest a ``silent`` or ``pinging`` reply goes on, so no test can hang on one."""
ENVIRONMENT = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_CONFIG_DIR",
    "ANTHROPIC_CUSTOM_HEADERS",
    "ANTHROPIC_FEDERATION_RULE_ID",
    "ANTHROPIC_IDENTITY_TOKEN",
    "ANTHROPIC_IDENTITY_TOKEN_FILE",
    "ANTHROPIC_ORGANIZATION_ID",
    "ANTHROPIC_PROFILE",
)
Event = tuple[str, Mapping[str, Any] | str]
"""One server-sent event: its name and its data (JSON, or raw text sent as it is)."""


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an HTTP status, a JSON body and extra headers.

    With ``events`` (then ``body`` is unused), the answer is an event stream. With
    ``raw``, the body is those bytes exactly, as ``content_type``. ``silent`` makes a
    server that takes the request and sends nothing for ``KEEPALIVE_FOR`` seconds;
    ``pings`` (seconds) one that sends its ``events``, then a ``ping`` event every
    ``pings`` seconds and nothing else, for ``KEEPALIVE_FOR`` seconds or until the client
    goes; ``drop`` one that sends its ``events`` and then shuts the connection without
    ending the chunked body (a dropped connection).
    """

    body: Mapping[str, Any]
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict[str, str])
    events: Sequence[Event] | None = None
    raw: bytes | None = None
    content_type: str = "application/json"
    silent: bool = False
    pings: float | None = None
    drop: bool = False


def text(value: str) -> dict[str, Any]:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A ``tool_use`` content block: ``input`` is the arguments as a JSON object."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": dict(arguments)}


def thinking(value: str, signature: str) -> dict[str, Any]:
    """A ``thinking`` block with its (opaque) signature."""
    return {"type": "thinking", "thinking": value, "signature": signature}


def redacted(data: str) -> dict[str, Any]:
    """A ``redacted_thinking`` block: encrypted reasoning, no text."""
    return {"type": "redacted_thinking", "data": data}


def message(
    *content: Mapping[str, Any],
    stop_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    model: str = "claude-test-20260101",
) -> Reply:
    """A ``message`` of ``content`` blocks (stop reason ``tool_use`` if one calls a tool,
    else ``end_turn``) with usage (10 in, 5 out unless given)."""
    calls = any(block.get("type") == "tool_use" for block in content)
    body: dict[str, Any] = {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [dict(block) for block in content],
        "stop_reason": stop_reason or ("tool_use" if calls else "end_turn"),
        "stop_sequence": None,
        "usage": dict(usage) if usage is not None else {"input_tokens": 10, "output_tokens": 5},
    }
    return Reply(body)


def streamed(*events: Event, headers: Mapping[str, str] | None = None) -> Reply:
    """An event stream of exactly ``events``."""
    return Reply({}, headers=dict(headers or {}), events=events)


def as_stream(reply: Reply, size: int = 3, *, end: bool = True) -> Reply:
    """``reply``'s message as the API streams it, each piece ``size`` characters.

    ``message_start`` (the message, its content empty, its usage but the output), then
    each block: ``content_block_start`` (empty), its pieces as deltas (text mid-word, a
    tool's input as JSON text mid-token, thinking, then its signature in one delta),
    ``content_block_stop``; a ``ping``; ``message_delta`` with the stop reason and the
    output tokens; ``message_stop`` (left out unless ``end``: a stream cut off).
    """
    body: dict[str, Any] = dict(reply.body)
    usage: dict[str, Any] = dict(body["usage"])
    start: dict[str, Any] = {
        **body,
        "content": [],
        "stop_reason": None,
        "usage": {**usage, "output_tokens": 1},
    }
    events: list[Event] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(body["content"]):
        events += _block_events(index, block, size)
        if index == 0:
            events.append(("ping", {"type": "ping"}))
    delta = {"stop_reason": body["stop_reason"], "stop_sequence": None}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": delta,
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
    )
    if end:
        events.append(("message_stop", {"type": "message_stop"}))
    return streamed(*events)


def _block_events(index: int, block: Mapping[str, Any], size: int) -> list[Event]:
    kind = block["type"]
    pieces: list[dict[str, Any]] = []
    if kind == "text":
        empty: dict[str, Any] = {"type": "text", "text": ""}
        pieces = [{"type": "text_delta", "text": part} for part in _cut(block["text"], size)]
    elif kind == "tool_use":
        empty = {**block, "input": {}}
        arguments = json.dumps(block["input"])
        pieces = [{"type": "input_json_delta", "partial_json": p} for p in _cut(arguments, size)]
    elif kind == "thinking":
        empty = {"type": "thinking", "thinking": ""}
        pieces = [{"type": "thinking_delta", "thinking": p} for p in _cut(block["thinking"], size)]
        pieces.append({"type": "signature_delta", "signature": block["signature"]})
    else:  # redacted_thinking comes whole in its start
        empty = dict(block)
    events: list[Event] = [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": empty},
        )
    ]
    events += [
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": piece})
        for piece in pieces
    ]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def _cut(value: str, size: int) -> list[str]:
    return [value[at : at + size] for at in range(0, len(value), size)]


def error_body(kind: str, message: str) -> dict[str, Any]:
    """The API's error object: ``{"type": "error", "error": {"type", "message"}}``."""
    return {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_test"}


def error(status: int, kind: str, message: str, *, headers: Mapping[str, str] = {}) -> Reply:
    """An API error with ``status`` (``overloaded_error`` is 529, ``rate_limit_error`` 429)."""
    return Reply(error_body(kind, message), status, dict(headers))


def error_event(kind: str, message: str) -> Event:
    """An ``error`` event, as the API sends one mid-stream."""
    return ("error", error_body(kind, message))


def raw(body: bytes, content_type: str, status: int = 200) -> Reply:
    """An answer of exactly ``body``, said to be ``content_type``."""
    return Reply({}, status, raw=body, content_type=content_type)


def silent() -> Reply:
    """A server that takes the request and never answers (for ``KEEPALIVE_FOR`` seconds)."""
    return Reply({}, silent=True)


class AnthropicServer:
    """A Messages API endpoint on 127.0.0.1 that answers from a script.

    ``url`` is the base URL to give a client (``http://127.0.0.1:<port>``; the SDK adds
    ``/v1/messages``). Use it as a context manager; ``script(*replies)`` adds answers,
    ``bodies`` holds the JSON of every request received, in order. ``always``, if given,
    answers every request once the script is used up (benchmarks).
    """

    def __init__(self, *, max_requests: int = 50, always: Reply | None = None) -> None:
        self.max_requests = max_requests
        self.always = always
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.unexpected = 0
        self.stopped = False
        self._replies: collections.deque[Reply] = collections.deque()
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        """The base URL of the API (no ``/v1``: the SDK adds it)."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

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
                return error(529, "overloaded_error", "too many requests for a test")
            if path != ENDPOINT:
                self.unexpected += 1
                return error(404, "not_found_error", f"no route {path}")
            if self._replies:
                return self._replies.popleft()
            if self.always is not None:
                return self.always
            self.unexpected += 1
        return error(500, "api_error", "the test server's script is used up")

    def _serve(self) -> None:
        self._httpd.serve_forever(poll_interval=0.01)

    def __enter__(self) -> AnthropicServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped = True  # a silent or pinging reply ends at once
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)


def _handler(server: AnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the real API
        disable_nagle_algorithm = True
        timeout = 10  # an idle kept-alive connection frees its thread after this

        def handle(self) -> None:
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
            if reply.raw is not None:
                self.start_chunked(reply, reply.content_type)
                self.send_piece(reply.raw)
                self.send_piece(b"")
                return
            if reply.events is not None:
                self.send_events(reply)
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

        def send_piece(self, data: bytes) -> bool:
            """One chunk of the chunked body (the empty one ends it); whether it went."""
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading: so does the server
                return False
            return True

        def send_events(self, reply: Reply) -> None:
            """Send the events, each in two halves; then pings, a drop, or the end."""
            self.start_chunked(reply, "text/event-stream; charset=utf-8")
            for name, data in reply.events or ():
                line = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
                encoded = f"event: {name}\ndata: {line}\n\n".encode()
                half = len(encoded) // 2  # may cut a UTF-8 character: the client reassembles
                if not (self.send_piece(encoded[:half]) and self.send_piece(encoded[half:])):
                    return
            if reply.drop:
                self.close_connection = True
                self.connection.shutdown(2)  # no last chunk: the body is cut
                return
            if reply.pings is not None:
                self.close_connection = True
                end = time.monotonic() + KEEPALIVE_FOR
                while time.monotonic() < end and not server.stopped:
                    if not self.send_piece(b'event: ping\ndata: {"type": "ping"}\n\n'):
                        return
                    time.sleep(reply.pings)
            self.send_piece(b"")

        def log_message(self, format: str, *args: Any) -> None:  # `format`: the base's name
            """Quiet: the tests read ``bodies``, not a log."""

    return Handler


def forget_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset every ``ANTHROPIC_*`` setting a client reads, for the rest of the test."""
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
