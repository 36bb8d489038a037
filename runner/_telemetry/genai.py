"""The GenAI semantic conventions' vocabulary: attribute names, and content as their schemas say.

Plain Python, no OpenTelemetry: ``_telemetry`` puts these on spans. The names and
the JSON shapes follow the OpenTelemetry GenAI semantic conventions v0.1.0
(``open-telemetry/semantic-conventions-genai``; status Development): messages are
``{"role", "parts": [...]}`` with ``text``, ``tool_call`` and ``tool_call_response``
parts, an output message adds its ``finish_reason``, system instructions are a list
of text parts. Structured values go on spans as JSON text, as the conventions allow
where the SDK takes no structured attributes.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any, Final, cast

from hooks import FilePart, ImagePart, Message, ModelResponse, Part, ReasoningPart, ToolCall, Usage
from runner._mcp.source import MCPTools
from runner._tools.arguments import UnparsedArguments

__all__ = [
    "AGENT_DESCRIPTION",
    "AGENT_NAME",
    "ATTEMPT",
    "BRANCH",
    "CAPTURE_ENV",
    "CONVERSATION",
    "ERROR_TYPE",
    "FINISH_REASONS",
    "INPUT_MESSAGES",
    "OPERATION",
    "OUTPUT_MESSAGES",
    "PROVIDER",
    "REQUEST_MODEL",
    "REQUEST_STREAM",
    "RESPONSE_MODEL",
    "RUN_ID",
    "SYSTEM_INSTRUCTIONS",
    "TOOL_ARGUMENTS",
    "TOOL_CALL_ID",
    "TOOL_DESCRIPTION",
    "TOOL_NAME",
    "TOOL_RESULT",
    "TOOL_TYPE",
    "capture_from_env",
    "input_messages",
    "mcp_attributes",
    "model_of",
    "output_messages",
    "system_instructions",
    "tool_arguments",
    "tool_result",
    "usage_attributes",
]

OPERATION: Final = "gen_ai.operation.name"
PROVIDER: Final = "gen_ai.provider.name"
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_DESCRIPTION: Final = "gen_ai.agent.description"
CONVERSATION: Final = "gen_ai.conversation.id"
REQUEST_MODEL: Final = "gen_ai.request.model"
REQUEST_STREAM: Final = "gen_ai.request.stream"
RESPONSE_MODEL: Final = "gen_ai.response.model"
FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_TYPE: Final = "gen_ai.tool.type"
TOOL_DESCRIPTION: Final = "gen_ai.tool.description"
TOOL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_RESULT: Final = "gen_ai.tool.call.result"
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
ERROR_TYPE: Final = "error.type"
# The MCP conventions' (gen-ai/mcp.md), on the execute_tool span of an MCP server's tool.
MCP_METHOD: Final = "mcp.method.name"
NETWORK_TRANSPORT: Final = "network.transport"
SERVER_ADDRESS: Final = "server.address"
SERVER_PORT: Final = "server.port"
MCP_SERVER: Final = "hookline.mcp.server"  # hookline's own: the MCPTools name
# hookline's own: which run, where in the agent tree, which attempt of an operation.
RUN_ID: Final = "hookline.run.id"
BRANCH: Final = "hookline.agent.branch"
ATTEMPT: Final = "hookline.attempt"

_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
_CACHED_TOKENS: Final = "gen_ai.usage.cache_read.input_tokens"
_REASONING_TOKENS: Final = "gen_ai.usage.reasoning.output_tokens"

# The standard switch (also read by the OpenAI and Google GenAI instrumentations):
# "true", or one of the newer modes that put content on spans.
CAPTURE_ENV: Final = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON: Final = frozenset(("true", "1", "yes", "on", "span_only", "span_and_event"))


def capture_from_env() -> bool:
    """Whether ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` asks for content."""
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


def model_of(model: object) -> tuple[str, str]:
    """``(provider, model name)`` of a model object, as spans name them.

    A model says both with ``provider`` and ``model`` attributes (``OpenAIChatModel``
    does: ``"openai"`` and the name it sends); otherwise the provider is the top-level
    package its class comes from and the name is the class's name.
    """
    kind = type(model)
    provider: object = getattr(model, "provider", None)
    name: object = getattr(model, "model", None)
    return (
        provider if isinstance(provider, str) and provider else kind.__module__.split(".")[0],
        name if isinstance(name, str) and name else kind.__name__,
    )


def usage_attributes(usage: Usage) -> dict[str, int]:
    """Token counts as attributes; the cached and reasoning parts only when there are some."""
    attributes = {_INPUT_TOKENS: usage.input_tokens, _OUTPUT_TOKENS: usage.output_tokens}
    if usage.cached_tokens:
        attributes[_CACHED_TOKENS] = usage.cached_tokens
    if usage.reasoning_tokens:
        attributes[_REASONING_TOKENS] = usage.reasoning_tokens
    return attributes


def input_messages(messages: Iterable[Message]) -> str:
    """The messages sent to a model, in order, as ``gen_ai.input.messages`` JSON."""
    return _json([_message(message) for message in messages])


def output_messages(response: ModelResponse) -> str:
    """A model's answer as ``gen_ai.output.messages`` JSON: one message, its finish reason."""
    message = _message(
        Message("assistant", response.text, tool_calls=response.tool_calls, parts=response.parts)
    )
    message["finish_reason"] = response.finish_reason or (
        "tool_call" if response.tool_calls else "stop"
    )
    return _json([message])


def system_instructions(instruction: str) -> str:
    """An agent's instruction as ``gen_ai.system_instructions`` JSON."""
    return _json([{"type": "text", "content": instruction}])


def tool_arguments(call: ToolCall) -> str:
    """A call's arguments as JSON: the object, or the text the model sent if it was none."""
    args = call.args
    if isinstance(args, UnparsedArguments):
        return _json(args.raw)
    return _json(dict(args))


def tool_result(content: str) -> str:
    """A tool's result as JSON: its content itself when that is JSON, else as a string."""
    try:
        json.loads(content)
    except ValueError:
        return _json(content)
    return content


def _message(message: Message) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [
        _part(part) for part in message.parts if type(part) is ReasoningPart
    ]  # the reasoning first, as the model gave it
    if message.role == "tool":
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id, "response": message.content}
        )
    elif message.content or not message.tool_calls:
        parts.append({"type": "text", "content": message.content})
    parts.extend(_call(call) for call in message.tool_calls)
    parts.extend(_part(part) for part in message.parts if type(part) is not ReasoningPart)
    return {"role": message.role, "parts": parts}


def _part(part: Part) -> dict[str, Any]:
    """A part as the conventions' ``reasoning``, ``uri`` or ``blob`` part (bytes in base64);
    reasoning by its visible text only, never the provider's payload."""
    if type(part) is ReasoningPart:
        return {"type": "reasoning", "content": part.summary}
    source = cast("ImagePart | FilePart", part)
    media_type = source.media_type
    kind = (media_type or "").partition("/")[0]
    modality = kind if kind in _MODALITIES else "image" if type(source) is ImagePart else "document"
    shown: dict[str, Any] = (
        {"type": "uri", "modality": modality, "uri": source.url}
        if source.data is None
        else {
            "type": "blob",
            "modality": modality,
            "content": base64.b64encode(source.data).decode("ascii"),
        }
    )
    if media_type is not None:
        shown["mime_type"] = media_type
    return shown


_MODALITIES: Final = frozenset({"image", "audio", "video"})


def _call(call: ToolCall) -> dict[str, Any]:
    args: Mapping[str, Any] | str = (
        call.args.raw if isinstance(call.args, UnparsedArguments) else dict(call.args)
    )
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": args}


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def mcp_attributes(source: MCPTools) -> dict[str, str | int]:
    """The attributes of a call of one of ``source``'s tools: the method, the server's
    name, the transport (``pipe`` for stdio, ``tcp`` for HTTP, none in-process) and an
    HTTP server's address and port."""
    attributes: dict[str, str | int] = {MCP_METHOD: "tools/call", MCP_SERVER: source.name}
    if source.command is not None:
        attributes[NETWORK_TRANSPORT] = "pipe"
    elif source.url is not None:
        attributes[NETWORK_TRANSPORT] = "tcp"
        url = urllib.parse.urlsplit(source.url)
        if url.hostname:
            attributes[SERVER_ADDRESS] = url.hostname
        try:
            port = url.port
        except ValueError:  # a port out of range: none recorded
            port = None
        attributes[SERVER_PORT] = port or (443 if url.scheme == "https" else 80)
    return attributes
