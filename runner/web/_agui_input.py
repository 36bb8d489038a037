"""An AG-UI ``RunAgentInput``'s messages as hookline's: the run's message and its history.

The client holds the conversation (``messages``, the whole thread so far); the server's
session for the thread (``threadId`` is the session id) holds it too. The last message
is the run's and must be the user's. The ones before it, the history:

- none: the session is the history (a client may send the new message alone);
- the session is new: the history becomes the session's first messages;
- the session has messages: the client's user messages must be the session's, in
  order -- else ``Refusal`` 409, rather than an answer to a conversation the model
  never saw.

What has no hookline form is refused (``Refusal`` 422) naming the message: content
parts other than text, activity and reasoning messages, tool-call arguments that are no
JSON object, and tools or a resume the client declares beside the server's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from ag_ui.core import (
    AssistantMessage,
    DeveloperMessage,
    RunAgentInput,
    SystemMessage,
    TextPart,
    ToolMessage,
    UserMessage,
)

from hooks import Message, ToolCall
from runner import SessionConflict, SessionStore
from runner.web._agui_pause import Refusal

__all__ = ["place_history", "run_messages"]


def run_messages(given: RunAgentInput) -> tuple[Message, tuple[Message, ...]]:
    """The run's message (the last, the user's) and the history before it."""
    if given.tools:
        names = ", ".join(repr(tool.name) for tool in given.tools)
        msg = (
            f"tools: the client declares tools ({names:.200}); this endpoint runs the "
            "server agent's tools only -- send tools: []"
        )
        raise Refusal(422, msg)
    if not given.messages:
        raise Refusal(422, "messages: empty; a run needs the user's message, last")
    converted = tuple(_message(message, index) for index, message in enumerate(given.messages))
    last = converted[-1]
    if last.role != "user":
        msg = f"messages: the last message must be the user's (role 'user'), got {last.role!r}"
        raise Refusal(422, msg)
    return last, converted[:-1]


def place_history(
    store: SessionStore, user_id: str, thread_id: str, history: Sequence[Message]
) -> None:
    """Make ``history`` the session's start, or check it is (see the module docs)."""
    if not history:
        return
    session = store.load(user_id, thread_id)
    if not session.messages:
        try:
            store.save(user_id, thread_id, tuple(history), version=session.version)
        except SessionConflict as exc:
            raise Refusal(409, f"thread {thread_id!r}: {exc}") from exc
        return
    held = [message.content for message in session.messages if message.role == "user"]
    sent = [message.content for message in history if message.role == "user"]
    if held != sent:
        at = next(
            (i for i, pair in enumerate(zip(held, sent, strict=False)) if len(set(pair)) > 1), None
        )
        where = (
            f"user message {at}"
            if at is not None
            else f"{len(sent)} user messages, not {len(held)}"
        )
        msg = (
            f"thread {thread_id!r}: the messages sent do not match the conversation the "
            f"server holds for it ({where}); send the new message alone, or start a new thread"
        )
        raise Refusal(409, msg)


def _message(message: object, index: int) -> Message:
    where = f"messages[{index}]"
    match message:
        case UserMessage(content=content):
            return Message("user", _text(content, where))
        case SystemMessage(content=content) | DeveloperMessage(content=content):
            return Message("system", content)
        case AssistantMessage(content=content, tool_calls=calls):
            return Message(
                "assistant",
                content or "",
                tool_calls=tuple(
                    _call(call.id, call.function.name, call.function.arguments, where)
                    for call in calls or ()
                ),
            )
        case ToolMessage(content=content, tool_call_id=call_id, error=error):
            return Message(
                "tool", _text(content, where), tool_call_id=call_id, is_error=error is not None
            )
        case _:
            role = getattr(message, "role", type(message).__name__)
            msg = f"{where}: a {role!r} message has no hookline form; leave it out"
            raise Refusal(422, msg)


def _text(content: str | Sequence[Any], where: str) -> str:
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content:
        if not isinstance(part, TextPart):
            kind = getattr(part, "type", type(part).__name__)
            msg = f"{where}: a {kind!r} part cannot be sent to this endpoint; text only"
            raise Refusal(422, msg)
        texts.append(part.text)
    return "".join(texts)


def _call(call_id: str, name: str, arguments: str, where: str) -> ToolCall:
    try:
        args: object = json.loads(arguments) if arguments.strip() else {}
    except ValueError as exc:
        raise Refusal(422, f"{where}: tool call {call_id!r} arguments are not JSON: {exc}") from exc
    if not isinstance(args, dict):
        raise Refusal(422, f"{where}: tool call {call_id!r} arguments must be a JSON object")
    return ToolCall(call_id, name, cast("dict[str, Any]", args))
