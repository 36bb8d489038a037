"""``TruncateToolResult``: a tool result longer than the model should read is cut in the middle."""

from __future__ import annotations

from dataclasses import replace
from typing import Final, final

from returns.result import Result, Success

from hooks._contexts import ToolContext
from hooks._messages import ToolResult
from hooks._results import Outcome

__all__ = ["TruncateToolResult"]


@final
class TruncateToolResult:
    """Keeps a tool result's first and last characters, ``max_chars`` in all with a note
    of what was cut in between; a shorter result passes as it is. The head gets two
    thirds of the room, the tail the rest: a log's end and a page's start both survive.
    """

    __slots__ = ("max_chars",)

    def __init__(self, max_chars: int = 20_000) -> None:
        checked: object = max_chars
        if type(checked) is not int or max_chars < 200:
            msg = f"TruncateToolResult's max_chars must be an int >= 200, got {checked!r:.60}"
            raise ValueError(msg)
        self.max_chars: Final = max_chars

    def after_tool(
        self, outcome: Outcome[ToolResult], ctx: ToolContext, /
    ) -> Result[ToolResult, Exception]:
        """The outcome, its result's content cut to ``max_chars`` if longer."""
        if type(outcome) is not Success:
            return outcome
        result: ToolResult = outcome.unwrap()
        content = result.content
        if len(content) <= self.max_chars:
            return outcome
        return Success(replace(result, content=self.cut(content)))

    def cut(self, content: str) -> str:
        """``content`` in ``max_chars`` characters: head, a note of the cut, tail."""
        total = len(content)
        note_room = len(f"\n[... {total} characters cut of {total} ...]\n")
        room = self.max_chars - note_room
        head = room * 2 // 3
        tail = room - head
        cut = total - head - tail
        note = f"\n[... {cut} characters cut of {total} ...]\n"
        return f"{content[:head]}{note}{content[total - tail :]}"

    def __repr__(self) -> str:
        return f"TruncateToolResult({self.max_chars})"
