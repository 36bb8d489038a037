"""Messages, tool results and decisions between LangChain and hookline, both ways.

Text, tool calls and tool results map; content LangChain holds in other blocks
(images, files, reasoning) is refused with ``TypeError``, never dropped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar, cast

from langchain.agents.middleware import ModelRequest as LCModelRequest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.types import Command

from hooks import (
    Approve,
    Decision,
    Edit,
    Message,
    ModelResponse,
    Reject,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolSpec,
)

M = TypeVar("M", bound=BaseMessage)


def resume_value(decision: Decision, /) -> dict[str, object]:
    """What ``Command(resume=...)`` carries for a human's ``decision`` on a paused call: a
    plain dict, which LangGraph's checkpointers can store (``Approve()`` is
    ``{"decision": "approve"}``, ``Edit(args)`` adds ``"args"``, ``Reject(message)``
    ``"message"``)."""
    match decision:
        case Approve():
            return {"decision": "approve"}
        case Edit(args):
            return {"decision": "edit", "args": dict(args)}
        case Reject(message):
            return {"decision": "reject", "message": message}
        case _:
            pass
    msg = f"resume_value takes Approve(), Edit(args) or Reject(message), got {decision!r:.80}"
    raise TypeError(msg)


def _decision(value: object) -> Decision:
    if isinstance(value, Mapping):
        answer = cast("Mapping[str, object]", value)
        kind, args, message = answer.get("decision"), answer.get("args"), answer.get("message")
        if kind == "approve":
            return Approve()
        if kind == "edit" and isinstance(args, Mapping):
            return Edit(dict(cast("Mapping[str, object]", args)))
        if kind == "reject" and isinstance(message, str):
            return Reject(message)
    msg = (
        "a paused hookline call resumes with Command(resume=resume_value(Approve() | "
        f"Edit(args) | Reject(message))), got {value!r:.80}"
    )
    raise TypeError(msg)


def decided(ctx: ToolContext, value: object) -> ToolContext:
    """``ctx`` with the human's decision: an ``Edit``'s arguments in place of the call's."""
    decision = _decision(value)
    call = replace(ctx.call, args=dict(decision.args)) if type(decision) is Edit else ctx.call
    return replace(ctx, call=call, decision=decision)


def text_of(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    texts: list[str] = []
    blocks: list[object] = list(content)  # as LangChain holds them, whatever its types say
    for block in blocks:
        if isinstance(block, str):
            texts.append(block)
        elif isinstance(block, dict) and block.get("type") == "text":  # pyright: ignore[reportUnknownMemberType]
            texts.append(str(block.get("text", "")))  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        else:
            kind = block.get("type") if isinstance(block, dict) else type(block).__name__  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            msg = (
                f"hookline's hooks cannot see a {type(message).__name__}'s {kind!r} content "
                "block (text, tool calls and tool results map); refusing rather than dropping it"
            )
            raise TypeError(msg)
    return "".join(texts)


def with_system(request: LCModelRequest[Any]) -> list[AnyMessage | SystemMessage]:
    system = request.system_message
    return [system, *request.messages] if system is not None else list(request.messages)


def to_hookline(message: BaseMessage) -> Message:
    if isinstance(message, SystemMessage):
        return Message("system", text_of(message))
    if isinstance(message, HumanMessage):
        return Message("user", text_of(message))
    if isinstance(message, AIMessage):
        calls = tuple(
            ToolCall(c.get("id") or "", c["name"], dict(c["args"])) for c in message.tool_calls
        )
        return Message("assistant", text_of(message), tool_calls=calls)
    if isinstance(message, ToolMessage):
        return Message(
            "tool",
            text_of(message),
            tool_call_id=message.tool_call_id,
            name=message.name,
            is_error=message.status == "error",
        )
    msg = (
        f"hookline's hooks cannot see a {type(message).__name__}; refusing rather than dropping it"
    )
    raise TypeError(msg)


def from_hookline(messages: Sequence[Message]) -> tuple[SystemMessage | None, list[AnyMessage]]:
    system: SystemMessage | None = None
    out: list[AnyMessage] = []
    for m in messages:
        if m.parts:
            msg = "a hook's message with parts (images, files, reasoning) cannot go to LangChain"
            raise TypeError(msg)
        if m.role == "system" and system is None and not out:
            system = SystemMessage(m.content)
        elif m.role == "system":
            out.append(SystemMessage(m.content))
        elif m.role == "user":
            out.append(HumanMessage(m.content))
        elif m.role == "assistant":
            out.append(ai_message(ModelResponse(text=m.content, tool_calls=m.tool_calls)))
        else:
            out.append(
                ToolMessage(
                    m.content,
                    tool_call_id=m.tool_call_id or "",
                    name=m.name,
                    status="error" if m.is_error else "success",
                )
            )
    return system, out


def spec_of(tool: object) -> ToolSpec:
    if isinstance(tool, Mapping):
        schema = cast("Mapping[str, object]", tool)
        name = str(schema.get("name", ""))
        return ToolSpec(name or "tool", str(schema.get("description", "")))
    return ToolSpec(str(getattr(tool, "name", "tool")), str(getattr(tool, "description", "")))


def to_response(message: AIMessage) -> ModelResponse:
    calls = tuple(
        ToolCall(c.get("id") or "", c["name"], dict(c["args"])) for c in message.tool_calls
    )
    return ModelResponse(text=text_of(message), tool_calls=calls)


def ai_message(response: ModelResponse) -> AIMessage:
    if response.parts:
        msg = "a hook's response with reasoning parts cannot go to LangChain"
        raise TypeError(msg)
    return AIMessage(
        response.text,
        tool_calls=[
            {"name": c.name, "args": dict(c.args), "id": c.id, "type": "tool_call"}
            for c in response.tool_calls
        ],
    )


def tool_result(answer: ToolMessage | Command[Any]) -> ToolResult:
    if not isinstance(answer, ToolMessage):
        msg = f"hookline's tool hooks take a ToolMessage per call; the tool answered {answer!r:.80}"
        raise TypeError(msg)
    return ToolResult(text_of(answer), is_error=answer.status == "error")


def tool_message(result: ToolResult, call: ToolCall) -> ToolMessage:
    if result.parts:
        msg = "a hook's tool result with parts (images, files) cannot go to LangChain"
        raise TypeError(msg)
    return ToolMessage(
        result.content,
        tool_call_id=call.id,
        name=call.name,
        status="error" if result.is_error else "success",
    )


def last_message(state: object, kind: type[M]) -> M | None:
    """The last message of ``kind`` in an agent state's messages."""
    messages: Sequence[object] = (
        cast("Mapping[str, Sequence[object]]", state).get("messages", ())
        if isinstance(state, Mapping)
        else ()
    )
    return next((m for m in reversed(messages) if isinstance(m, kind)), None)
