"""A small Responses API server for the tests: ``POST /v1/responses``, scripted replies.

``ResponsesServer`` is ``OpenAIServer`` (``tests/helpers/openai_server.py``: 127.0.0.1,
a free port, keep-alive, every request body kept in ``bodies``, a bounded script; the
connections it accepted counted in ``connections``) on the
Responses API's path, and its streams are the Responses API's: each event goes out as
``event: <type>`` and ``data: <json>``, written in two halves flushed apart (so events,
and UTF-8 characters, arrive split across reads), with no ``[DONE]`` after the last. A
``str`` event is sent as it is (raw SSE text: a comment, a broken line...).

The builders write bodies and events as the API reference describes them (the ``openai``
SDK's ``openai.types.responses`` types): ``response`` (a ``response`` object),
``message``, ``function_call``, ``reasoning`` (output items), ``usage``; ``as_stream``
cuts a response into the events a real server sends (``response.created``, each item's
``output_item.added`` / deltas / ``.done`` events, ``response.completed`` or
``response.incomplete``), text and arguments in pieces of ``size`` characters;
``failed_event`` and ``error_event`` are the failure events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.helpers.openai_server import OpenAIServer, Reply, _handler  # pyright: ignore[reportPrivateUsage]

ENDPOINT = "/v1/responses"


def message(text: str, *, item_id: str = "msg_1", refusal: bool = False) -> dict[str, Any]:
    """An assistant ``message`` output item holding ``text`` (or a refusal)."""
    part = (
        {"type": "refusal", "refusal": text}
        if refusal
        else {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    )
    return {
        "type": "message",
        "id": item_id,
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }


def function_call(call_id: str, name: str, arguments: str, *, item_id: str = "") -> dict[str, Any]:
    """A ``function_call`` output item: ``arguments`` is JSON text."""
    return {
        "type": "function_call",
        "id": item_id or f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def reasoning(item_id: str, encrypted: str, *summary: str) -> dict[str, Any]:
    """A ``reasoning`` output item with its ``encrypted_content`` and summary texts."""
    return {
        "type": "reasoning",
        "id": item_id,
        "summary": [{"type": "summary_text", "text": text} for text in summary],
        "encrypted_content": encrypted,
    }


def usage(
    input_tokens: int, output_tokens: int, *, cached: int = 0, reasoning_tokens: int = 0
) -> dict[str, Any]:
    """A response's ``usage`` with its details."""
    return {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": cached},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": input_tokens + output_tokens,
    }


def response_body(
    *output: Mapping[str, Any],
    status: str = "completed",
    incomplete: str | None = None,
    used: Mapping[str, Any] | None = None,
    model: str = "test-model-2026-01-01",
    error: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A ``response`` object holding ``output`` items."""
    return {
        "id": "resp_test",
        "object": "response",
        "created_at": 1_770_000_000,
        "status": status,
        "error": dict(error) if error is not None else None,
        "incomplete_details": {"reason": incomplete} if incomplete is not None else None,
        "instructions": None,
        "model": model,
        "output": [dict(item) for item in output],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "store": False,
        "usage": dict(used) if used is not None else None,
    }


def response(
    *output: Mapping[str, Any],
    status: str = "completed",
    incomplete: str | None = None,
    used: Mapping[str, Any] | None = None,
    model: str = "test-model-2026-01-01",
) -> Reply:
    """A 200 answer: a ``response`` object holding ``output`` items."""
    return Reply(
        response_body(*output, status=status, incomplete=incomplete, used=used, model=model)
    )


def as_stream(reply: Reply, size: int = 3) -> Reply:
    """``reply``'s response as a server streams it, text and arguments in ``size`` pieces
    (mid-word, mid-token), every item's ``added`` / deltas / ``done`` events, then
    ``response.completed`` (or ``response.incomplete``) with the whole response."""
    body = dict(reply.body)
    events: list[dict[str, Any]] = []

    def event(kind: str, **fields: Any) -> None:
        events.append({"type": kind, "sequence_number": len(events), **fields})

    event("response.created", response={**body, "status": "in_progress", "output": []})
    event("response.in_progress", response={**body, "status": "in_progress", "output": []})
    for index, item in enumerate(body["output"]):
        kind = item["type"]
        if kind == "message":
            event("response.output_item.added", output_index=index, item={**item, "content": []})
            for content_index, part in enumerate(item["content"]):
                text = part.get("text", part.get("refusal", ""))
                delta = (
                    "response.output_text.delta"
                    if part["type"] == "output_text"
                    else "response.refusal.delta"
                )
                for at in range(0, len(text), size):
                    event(
                        delta,
                        item_id=item["id"],
                        output_index=index,
                        content_index=content_index,
                        delta=text[at : at + size],
                        logprobs=[],
                    )
        elif kind == "function_call":
            event(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            arguments = item["arguments"]
            for at in range(0, len(arguments), size):
                event(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=arguments[at : at + size],
                )
            event(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=index,
                arguments=arguments,
            )
        else:  # a reasoning item: its encrypted content is whole only in .done
            added = {**item, "summary": [], "encrypted_content": None}
            event("response.output_item.added", output_index=index, item=added)
            for summary_index, part in enumerate(item.get("summary") or ()):
                event(
                    "response.reasoning_summary_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=summary_index,
                    delta=part["text"],
                )
        event("response.output_item.done", output_index=index, item=item)
    final = "response.incomplete" if body["status"] == "incomplete" else "response.completed"
    event(final, response=body)
    return Reply({}, events=events)


def streamed(*events: Mapping[str, Any] | str) -> Reply:
    """A streamed answer of exactly ``events`` (no final event unless given)."""
    return Reply({}, events=events)


def failed_event(code: str, message: str) -> dict[str, Any]:
    """A ``response.failed`` event: the response with its ``error``."""
    body = response_body(status="failed", error={"code": code, "message": message})
    return {"type": "response.failed", "sequence_number": 9, "response": body}


def error_event(code: str | None, message: str) -> dict[str, Any]:
    """An ``error`` event, as the API sends one mid-stream."""
    return {"type": "error", "sequence_number": 9, "code": code, "message": message, "param": None}


class ResponsesServer(OpenAIServer):
    """``OpenAIServer`` serving ``POST /v1/responses``, streams as typed events."""

    endpoint = ENDPOINT

    def __init__(self, *, max_requests: int = 50, always: Reply | None = None) -> None:
        super().__init__(max_requests=max_requests, always=always)
        self._httpd.RequestHandlerClass = _responses_handler(self)

    def __enter__(self) -> ResponsesServer:
        super().__enter__()
        return self


def _responses_handler(server: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    base: Any = _handler(server)

    class Handler(base):  # type: ignore[misc]  # the chat server's handler: typed by its factory as its base
        def send_events(self, reply: Reply, events: Sequence[Mapping[str, Any] | str]) -> None:
            """Send ``events`` as typed server-sent events, each in two halves."""
            self.start_chunked(reply, "text/event-stream")
            try:
                for item in events:
                    if isinstance(item, str):
                        data = item.encode()
                    else:
                        line = json.dumps(item, ensure_ascii=False)
                        data = f"event: {item.get('type', '')}\ndata: {line}\n\n".encode()
                    half = len(data) // 2  # may cut a UTF-8 character: the client reassembles
                    for piece in (data[:half], data[half:]):
                        if piece:
                            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                            self.wfile.flush()
                if reply.keepalive is not None:
                    self.send_keepalive(reply.keepalive)
                    return
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client stopped reading: so does the server

    return Handler
