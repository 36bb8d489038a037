"""hookline's vocabulary to the Chat Completions wire format and back.

Requests: messages (``system``, ``user``, ``assistant`` with its tool calls, ``tool``
results with their call ids) and tool specs, as the SDK's typed dicts. A user message's
images and files become content parts (``image_url``; ``file`` with the bytes as a
``data:`` URL); what the format cannot carry -- a file by URL, an image or file in a
tool result -- is refused with a ``ValueError`` naming the message, never dropped.
Reasoning parts are left out: Chat Completions takes no reasoning back. Responses: the
first choice's text, tool calls (arguments read by ``parse_arguments``), finish
reason and token usage, as a ``ModelResponse``. The SDK itself is only named for the
type checker: this module imports nothing of it at run time.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn

from hooks import (
    FilePart,
    ImagePart,
    Message,
    ModelResponse,
    OutputSpec,
    ToolCall,
    ToolSpec,
    Usage,
)
from runner._tools.arguments import parse_arguments

if TYPE_CHECKING:
    from openai.types import CompletionUsage
    from openai.types.chat import (
        ChatCompletion,
        ChatCompletionAssistantMessageParam,
        ChatCompletionContentPartParam,
        ChatCompletionFunctionToolParam,
        ChatCompletionMessageFunctionToolCallParam,
        ChatCompletionMessageParam,
        ChatCompletionMessageToolCallUnion,
        ChatCompletionUserMessageParam,
    )
    from openai.types.chat.chat_completion_content_part_param import File

__all__ = [
    "data_url",
    "from_completion",
    "response_format",
    "to_messages",
    "to_tools",
    "usage_of",
]

# A tool offered without a schema takes no arguments; said explicitly, as every
# OpenAI-compatible server reads it (some refuse a missing or empty `parameters`).
_NO_PARAMETERS: Final[Mapping[str, Any]] = {"type": "object", "properties": {}}


def to_messages(messages: Iterable[Message]) -> list[ChatCompletionMessageParam]:
    """The conversation as Chat Completions messages, in order."""
    return [_message(message) for message in messages]


def _message(message: Message) -> ChatCompletionMessageParam:
    role, name = message.role, message.name
    if role == "tool":
        if message.parts:
            _refuse_parts(message, "a tool result's images and files")
        # A tool result answers one call; the wire format gives it no `name`.
        return {
            "role": "tool",
            "content": message.content,
            "tool_call_id": message.tool_call_id or "",
        }
    if role == "assistant":
        assistant: ChatCompletionAssistantMessageParam = {"role": "assistant"}
        if message.tool_calls:
            # Content may be null when the turn is only tool calls.
            assistant["content"] = message.content or None
            assistant["tool_calls"] = [_tool_call(call) for call in message.tool_calls]
        else:
            assistant["content"] = message.content
        if name is not None:
            assistant["name"] = name
        return assistant
    if role == "system":
        if name is not None:
            return {"role": "system", "content": message.content, "name": name}
        return {"role": "system", "content": message.content}
    user: ChatCompletionUserMessageParam = {
        "role": "user",
        "content": _content(message) if message.parts else message.content,
    }
    if name is not None:
        user["name"] = name
    return user


def _content(message: Message) -> list[ChatCompletionContentPartParam]:
    """A user message's text, then its images and files, as content parts."""
    content: list[ChatCompletionContentPartParam] = []
    if message.content:
        content.append({"type": "text", "text": message.content})
    for part in message.parts:
        if type(part) is ImagePart:
            content.append({"type": "image_url", "image_url": {"url": data_url(part)}})
        elif type(part) is FilePart:
            if part.data is None:
                _refuse_parts(message, "a file by URL (give its bytes)")
            file: File = {"type": "file", "file": {"file_data": data_url(part)}}
            if part.name is not None:
                file["file"]["filename"] = part.name
            content.append(file)
    return content


def data_url(part: ImagePart | FilePart) -> str:
    """Where the part is: its URL, or its bytes as a ``data:`` URL in base64."""
    if part.data is None:
        return part.url or ""
    encoded = base64.b64encode(part.data).decode("ascii")
    return f"data:{part.media_type};base64,{encoded}"


def _refuse_parts(message: Message, what: str) -> NoReturn:
    msg = (
        f"Chat Completions cannot carry {what}: a {message.role} message holds "
        f"{', '.join(type(part).__name__ for part in message.parts)}; use a model whose "
        "API takes them (OpenAIResponsesModel, AnthropicModel)"
    )
    raise ValueError(msg)


def _tool_call(call: ToolCall) -> ChatCompletionMessageFunctionToolCallParam:
    arguments = json.dumps(dict(call.args), ensure_ascii=False)
    return {
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    }


def to_tools(specs: Sequence[ToolSpec]) -> list[ChatCompletionFunctionToolParam]:
    """The tools the model may call, as function tools with their JSON schemas."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": dict(spec.parameters or _NO_PARAMETERS),
            },
        }
        for spec in specs
    ]


def response_format(spec: OutputSpec) -> dict[str, Any]:
    """The answer's required shape as ``response_format``: a named ``json_schema``."""
    schema: dict[str, Any] = {"name": spec.name}
    if spec.description:
        schema["description"] = spec.description
    schema["schema"] = dict(spec.schema)
    schema["strict"] = spec.strict
    return {"type": "json_schema", "json_schema": schema}


def from_completion(completion: ChatCompletion) -> ModelResponse:
    """The first choice of ``completion`` as a ``ModelResponse``, with the call's usage and
    the model that answered.

    Text is the message's ``content`` (its ``refusal`` when the model refused, ``""``
    when neither). A tool call without an id (some local servers) gets ``call_<n>``,
    its position in the response.
    """
    if not completion.choices:
        msg = f"the chat completion {completion.id!r} holds no choices, so no answer"
        raise ValueError(msg)
    choice = completion.choices[0]
    message = choice.message
    calls = message.tool_calls
    return ModelResponse(
        message.content if message.content is not None else message.refusal or "",
        tuple(_from_call(call, index) for index, call in enumerate(calls)) if calls else (),
        usage_of(completion.usage),
        choice.finish_reason,
        completion.model or None,
    )


def _from_call(call: ChatCompletionMessageToolCallUnion, index: int) -> ToolCall:
    call_id = call.id or f"call_{index}"
    if call.type == "function":
        return ToolCall(call_id, call.function.name, parse_arguments(call.function.arguments))
    # A custom (free-form) tool call: hookline offers none, but a server may send one.
    return ToolCall(call_id, call.custom.name, parse_arguments(call.custom.input))


def usage_of(usage: CompletionUsage | None) -> Usage | None:
    """Token counts: prompt -> input, completion -> output, and the cached and reasoning
    parts when the server reports them (absent counts are 0)."""
    if usage is None:
        return None
    prompt, completion = usage.prompt_tokens_details, usage.completion_tokens_details
    return Usage(
        usage.prompt_tokens or 0,
        usage.completion_tokens or 0,
        (prompt.cached_tokens or 0) if prompt is not None else 0,
        (completion.reasoning_tokens or 0) if completion is not None else 0,
    )
