"""How ``ScriptedModel`` streams an answer: the whole response, cut into deltas.

The text goes out in pieces of ``size`` characters; then each tool call, as a first
``ToolCallDelta`` with its id and name and its JSON arguments in pieces of ``size``
characters. ``ScriptedModel.stream`` yields them, then the whole ``ModelResponse``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from hooks import ModelResponse, ToolCall
from runner._events import TextDelta, ToolCallDelta
from runner._tools.arguments import UnparsedArguments

__all__ = ["arguments_text", "deltas"]


def deltas(response: ModelResponse, size: int) -> Iterator[TextDelta | ToolCallDelta]:
    """``response``'s text, then its tool calls, as deltas of at most ``size`` characters."""
    text = response.text
    for start in range(0, len(text), size):
        yield TextDelta(text[start : start + size])
    for index, call in enumerate(response.tool_calls):
        yield ToolCallDelta(index, call.id, call.name)
        arguments = arguments_text(call)
        for start in range(0, len(arguments), size):
            yield ToolCallDelta(index, arguments=arguments[start : start + size])


def arguments_text(call: ToolCall) -> str:
    """The call's arguments as the JSON text a model would send.

    Arguments a provider sent as no JSON object stream as they came (their ``raw``
    text); a value JSON cannot hold is written as its ``str``: the deltas are only for
    show, the final response carries the arguments themselves.
    """
    args = call.args
    if isinstance(args, UnparsedArguments):
        return args.raw
    return json.dumps(dict(args), ensure_ascii=False, default=str)
