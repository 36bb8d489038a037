"""``ScriptedModel``: the embedded default model, answering from a script and rules.

``ScriptedModel`` needs no network. It answers from a script (responses, plain
strings, or exceptions to raise, in order) and, once the script is used up, from
rules: a regular expression over the last user message (or the last tool result)
mapped to a reply or a tool call. That is enough for examples and tests to look
like a real assistant. It streams too: the same answer, in chunks of ``chunk_size``
characters.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import itertools
import json
import re
import threading
from collections.abc import (
    AsyncGenerator,
    Generator,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, final

from hooks import ModelRequest, ModelResponse, ToolCall
from hooks._slots import slot_init
from runner._checks import int_at_least, positive_int
from runner._errors import ScriptExhausted
from runner._events import ModelChunk
from runner._models.scripted_stream import deltas

__all__ = ["Rule", "ScriptItem", "ScriptedModel"]


@slot_init
@dataclass(frozen=True, slots=True)
class Rule:
    """When ``pattern`` matches, answer with ``reply`` and, if ``tool`` is set, call it.

    ``on="user"`` matches the last user message; ``on="tool"`` matches the content of
    a tool result the model just received (``pattern=".*"`` for any). ``reply`` and
    each value of ``args`` are ``str.format`` templates over the match's groups
    (``{0}`` is the whole match, ``{1}``... and named groups), plus ``{content}``, the
    matched message. An argument that reads as JSON (``"2"``, ``"true"``) is parsed.
    """

    pattern: str
    reply: str = ""
    tool: str | None = None
    args: Mapping[str, str] = field(default_factory=dict[str, str])
    on: Literal["user", "tool"] = "user"

    def respond(self, content: str, call_id: str) -> ModelResponse | None:
        """The answer to ``content``, or ``None`` when the pattern does not match it."""
        match = _compiled(self.pattern).search(content)
        if match is None:
            return None
        values: dict[str, Any] = {"content": content, **match.groupdict()}
        groups = (match.group(0), *match.groups())
        text = self.reply.format(*groups, **values)
        if self.tool is None:
            return ModelResponse(text=text)
        args = {key: _parse(value.format(*groups, **values)) for key, value in self.args.items()}
        return ModelResponse(text=text, tool_calls=(ToolCall(call_id, self.tool, args),))


ScriptItem = ModelResponse | str | BaseException
"""One scripted answer: a response, a text answer, or an exception to raise."""


@final
class ScriptedModel:
    """A model that answers from a script, then from rules, then with ``default``.

    ``requests`` holds the last ``keep_requests`` requests received, oldest first,
    so tests can see what the model was really sent: 100 by default, so a long
    session's model does not keep its whole history many times over; ``None`` keeps
    them all, ``0`` none. ``calls`` counts every call, kept or not. Thread-safe.

    ``stream`` and ``astream`` answer what ``generate`` would, in chunks: the text in
    pieces of ``chunk_size`` characters, then each tool call (its id and name, then
    its JSON arguments in pieces of ``chunk_size``), then the whole response.
    """

    __slots__ = (
        "_calls",
        "_ids",
        "_kept",
        "_lock",
        "_script",
        "chunk_size",
        "default",
        "rules",
    )

    provider: ClassVar[str] = "hookline"
    """Who serves the model, as telemetry names it."""
    model: ClassVar[str] = "scripted"
    """The model's name, as telemetry names it (``chat scripted``)."""

    def __init__(
        self,
        script: Iterable[ScriptItem] = (),
        /,
        *,
        rules: Sequence[Rule] = (),
        default: str | None = None,
        keep_requests: int | None = 100,
        chunk_size: int = 8,
    ) -> None:
        if keep_requests is not None:
            int_at_least(
                "ScriptedModel.keep_requests", keep_requests, 0, expected="None or an int >= 0"
            )
        self.chunk_size = positive_int("ScriptedModel.chunk_size", chunk_size)
        self._script = list(script)
        self.rules = tuple(rules)
        self.default = default
        self._kept: collections.deque[ModelRequest] = collections.deque(maxlen=keep_requests)
        self._calls = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    @property
    def requests(self) -> list[ModelRequest]:
        """The last ``keep_requests`` requests, oldest first: a new list at each access."""
        with self._lock:
            return list(self._kept)

    @property
    def calls(self) -> int:
        """How many requests were answered (``generate``, ``stream``, ``astream``), kept or not."""
        return self._calls

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next scripted item, else the first matching rule, else ``default``."""
        with self._lock:
            self._kept.append(request)
            self._calls += 1
            calls = self._calls
            item = self._script.pop(0) if self._script else None
            call_id = f"call_{next(self._ids)}"
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            return ModelResponse(text=item)
        if item is not None:
            return item
        response = self._by_rule(request, call_id) if self.rules else None
        if response is not None:
            return response
        if self.default is not None:
            return ModelResponse(text=self.default)
        raise ScriptExhausted(calls)

    def stream(self, request: ModelRequest, /) -> Generator[ModelChunk, None, None]:
        """What ``generate`` answers, as deltas, then the whole response.

        The request is taken (and a scripted exception raised) at the first ``next``.
        """
        response = self.generate(request)
        yield from deltas(response, self.chunk_size)
        yield response

    async def astream(self, request: ModelRequest, /) -> AsyncGenerator[ModelChunk, None]:
        """``stream`` for async code: each chunk after one pass of the event loop.

        Passing control before each chunk lets concurrent streams interleave as a
        network model's do.
        """
        response = self.generate(request)
        for delta in deltas(response, self.chunk_size):
            await asyncio.sleep(0)
            yield delta
        await asyncio.sleep(0)
        yield response

    def _by_rule(self, request: ModelRequest, call_id: str) -> ModelResponse | None:
        if not request.messages:
            return None
        last = request.messages[-1]
        if last.role not in {"user", "tool"}:
            return None
        for rule in self.rules:
            if rule.on == last.role:
                response = rule.respond(last.content, call_id)
                if response is not None:
                    return response
        return None

    def __repr__(self) -> str:
        return f"ScriptedModel({len(self._script)} scripted, {len(self.rules)} rules)"


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    """A rule's pattern, compiled once: case-insensitive, ``.`` matching newlines too."""
    return re.compile(pattern, re.IGNORECASE | re.DOTALL)


def _parse(value: str) -> Any:
    try:
        return json.loads(value)
    except ValueError:
        return value
