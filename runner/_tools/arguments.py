"""Tool arguments as a provider sends them: JSON text, read into a mapping once.

A model adapter calls ``parse_arguments(text)``. Text that is no JSON object does not
fail the model call: the ``ToolCall`` keeps an ``UnparsedArguments`` as its ``args``,
an empty mapping that carries the text and what is wrong with it. When the call runs,
the runner raises ``ToolArgumentsError(name, text, problem)`` instead of running the
tool, so ``on_tool_error`` sees a typed error and, unrecovered, the model is told.

A hook that repairs the call replaces its ``args`` (``replace(call, args={...})``):
the marker goes with them, and the repaired call runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final, NoReturn, final

__all__ = ["UnparsedArguments", "parse_arguments"]

_JSON_KINDS: Final[Mapping[type, str]] = {
    list: "an array",
    str: "a string",
    bool: "a boolean",
    type(None): "null",
}


@final
class UnparsedArguments(Mapping[str, Any]):
    """A tool call's argument text that is no JSON object: empty as a mapping.

    ``raw`` is the text the model sent, ``problem`` says what is wrong with it. Sent
    back to a provider in the conversation, the call's arguments read ``{}``: servers
    that parse them (vLLM, Ollama) would refuse the next request over the bad text,
    which the error result the model receives quotes anyway.
    """

    __slots__ = ("problem", "raw")

    def __init__(self, raw: str, problem: str) -> None:
        self.raw: Final = raw
        self.problem: Final = problem

    def __getitem__(self, key: str) -> NoReturn:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        if type(other) is UnparsedArguments:
            return (self.raw, self.problem) == (other.raw, other.problem)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.raw, self.problem))

    def __repr__(self) -> str:
        return f"UnparsedArguments({self.raw!r}, {self.problem!r})"


def parse_arguments(text: str) -> Mapping[str, Any]:
    """``text`` read as a JSON object, or an ``UnparsedArguments`` saying why it is none.

    Empty or blank text reads as no arguments (``{}``): some servers send ``""`` for a
    tool called without any.
    """
    if not text.strip():
        return {}
    try:
        value: object = json.loads(text)
    except ValueError as exc:
        return UnparsedArguments(text, f"arguments are not valid JSON: {exc}")
    if not isinstance(value, dict):
        kind = _JSON_KINDS.get(type(value), "a number")
        return UnparsedArguments(text, f"arguments must be a JSON object, got {kind}")
    return value  # pyright: ignore[reportUnknownVariableType]  # json.loads made it
