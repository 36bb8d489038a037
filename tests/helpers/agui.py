"""Helpers of the AG-UI endpoint tests: post a ``RunAgentInput``, read the SSE frames, and
check a stream with the AG-UI conformance validator (``ag-ui-validate``)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from ag_ui_validate import Diagnostic
from ag_ui_validate.transport import TransportOptions, validate_body

from runner.web import AGUIApp


@dataclass
class Answer:
    """An endpoint's answer: its status, content type, body text and SSE frames (parsed)."""

    status: int
    content_type: str
    text: str

    @property
    def frames(self) -> list[dict[str, Any]]:
        """Each ``data:`` frame's JSON, in order."""
        return [
            json.loads(line[6:]) for line in self.text.splitlines() if line.startswith("data: ")
        ]

    @property
    def types(self) -> list[str]:
        """Each frame's ``type``."""
        return [frame["type"] for frame in self.frames]

    @property
    def error(self) -> str:
        """A refusal's message."""
        body: dict[str, str] = json.loads(self.text)
        return body["error"]

    def custom(self, name: str) -> list[dict[str, Any]]:
        """The values of the ``CUSTOM`` frames named ``name``."""
        return [f["value"] for f in self.frames if f["type"] == "CUSTOM" and f["name"] == name]

    def text_of(self) -> str:
        """The text of every ``TEXT_MESSAGE_CONTENT`` joined."""
        return "".join(f["delta"] for f in self.frames if f["type"] == "TEXT_MESSAGE_CONTENT")

    @property
    def last(self) -> dict[str, Any]:
        """The last frame."""
        return self.frames[-1]


def run_input(
    text: str = "hi", *, thread: str = "t1", run: str = "r1", **extra: Any
) -> dict[str, Any]:
    """A ``RunAgentInput`` (wire JSON) sending ``text`` as the user's message."""
    messages = [{"id": "m1", "role": "user", "content": text}]
    return {"threadId": thread, "runId": run, "messages": messages} | extra


def resume_input(
    answers: Sequence[tuple[str, Any]], *, thread: str = "t1", run: str = "r2"
) -> dict[str, Any]:
    """A ``RunAgentInput`` answering interrupts: ``(id, payload)``, payload ``None`` cancels."""
    entries = [
        {"interruptId": id_, "status": "cancelled"}
        if payload is None
        else {"interruptId": id_, "status": "resolved", "payload": payload}
        for id_, payload in answers
    ]
    return {"threadId": thread, "runId": run, "messages": [], "resume": entries}


def post(app: AGUIApp, body: object, *, raw: bytes | None = None, method: str = "POST") -> Answer:
    """Send ``body`` (as JSON, or ``raw`` bytes) to ``app`` through httpx's ASGI transport."""

    async def main() -> Answer:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://agui") as client:
            content = raw if raw is not None else json.dumps(body).encode()
            response = await client.request(method, "/", content=content)
            return Answer(
                response.status_code, response.headers.get("content-type", ""), response.text
            )

    return asyncio.run(main())


def problems(text: str) -> list[Diagnostic]:
    """The validator's errors and warnings on a recorded SSE body (info is no problem)."""

    async def chunks() -> AsyncIterator[bytes]:
        yield text.encode()

    async def main() -> list[Diagnostic]:
        options = TransportOptions(recorded=True)
        result = await validate_body(chunks(), "text/event-stream", options)
        assert result.event_count > 0
        return [d for d in result.report.diagnostics if d.severity in ("error", "warning")]

    return asyncio.run(main())


@contextmanager
def serving(app: AGUIApp) -> Iterator[str]:
    """``app`` served by uvicorn on 127.0.0.1 (a free port) on a thread; yields its URL.

    Stopped and joined when the block ends: nothing is left running.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]})
    thread.start()
    try:
        while not server.started:
            assert thread.is_alive(), "the server did not start"
            threading.Event().wait(0.01)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        server.should_exit = True
        thread.join()
        sock.close()
