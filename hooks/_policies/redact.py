"""``Redact``: secrets hidden from what the model reads, given back to the tools that need them.

Before every model call, each match of the patterns in the request's messages (their
text and the string arguments of their tool calls) becomes a placeholder such as
``[secret-1]``; the model never reads the secret. Before every tool call, placeholders
in the call's string arguments (at any depth) become their secrets again, so a tool the
model asked to use the secret gets the real value. The table of placeholders is kept in
the run's state, session-scoped (``key``): one secret keeps one placeholder across the
turns of a conversation, and a paused run carries it in its ``RunState``.

What stays as it was: the conversation the session keeps (the user's own messages hold
their secrets; the model's hold placeholders), and the model's answer, which shows a
placeholder where it names a secret.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, Final, cast, final

from hooks._contexts import ModelContext, ToolContext
from hooks._messages import Message, ToolCall
from hooks._results import Cont
from hooks._state import StateKey

__all__ = ["Redact"]

_PLACEHOLDER: Final = re.compile(r"\[secret-[0-9]+\]")


@final
class Redact:
    """Hides what ``patterns`` match from the model; restores it in tool arguments."""

    __slots__ = ("_key", "patterns")

    def __init__(self, *patterns: str | re.Pattern[str], key: str = "hookline.redact") -> None:
        if not patterns:
            msg = "Redact needs at least one pattern (a str regex or a compiled re.Pattern)"
            raise ValueError(msg)
        compiled: list[re.Pattern[str]] = []
        for pattern in patterns:
            given: object = pattern
            if isinstance(given, str):
                found = re.compile(given)
            elif isinstance(given, re.Pattern) and isinstance(given.pattern, str):
                found = given
            else:
                msg = f"Redact's patterns are str regexes or re.Pattern[str], got {given!r:.60}"
                raise TypeError(msg)
            if found.fullmatch("") is not None:
                msg = f"Redact's pattern {found.pattern!r} matches the empty string"
                raise ValueError(msg)
            compiled.append(found)
        self.patterns: Final = tuple(compiled)
        self._key: Final = StateKey[dict[str, str]](key, scope="session")

    def before_model(self, ctx: ModelContext, /) -> Cont[ModelContext]:
        """The request with every secret replaced by its placeholder."""
        state = ctx.invocation.state
        kept = state.get(self._key)
        table: dict[str, str] = {} if kept is None else dict(kept)  # placeholder -> secret
        known = {secret: placeholder for placeholder, secret in table.items()}
        hider = _Hider(self.patterns, table, known)
        request = ctx.request
        messages = [hider.message(message) for message in request.messages]
        if not hider.changed:
            return Cont(ctx)
        state.set(self._key, table)
        return Cont(replace(ctx, request=replace(request, messages=tuple(messages))))

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        """The call with every placeholder in its string arguments turned back into its secret."""
        table = ctx.invocation.state.get(self._key)
        if not table:
            return Cont(ctx)
        args = ctx.call.args
        restored = _restore(args, table)
        if restored is args:
            return Cont(ctx)
        return Cont(replace(ctx, call=replace(ctx.call, args=restored)))

    def __repr__(self) -> str:
        return f"Redact({', '.join(repr(p.pattern) for p in self.patterns)})"


@final
class _Hider:
    """Replaces secrets in messages, growing the table with new placeholders."""

    __slots__ = ("changed", "known", "patterns", "table")

    def __init__(
        self,
        patterns: tuple[re.Pattern[str], ...],
        table: dict[str, str],
        known: dict[str, str],
    ) -> None:
        self.patterns = patterns
        self.table = table
        self.known = known
        self.changed = False

    def text(self, text: str) -> str:
        for pattern in self.patterns:
            text = pattern.sub(self._placeholder, text)
        return text

    def _placeholder(self, match: re.Match[str]) -> str:
        secret = match.group(0)
        if _PLACEHOLDER.fullmatch(secret):
            return secret  # already hidden
        placeholder = self.known.get(secret)
        if placeholder is None:
            placeholder = f"[secret-{len(self.table) + 1}]"
            self.table[placeholder] = secret
            self.known[secret] = placeholder
        self.changed = True
        return placeholder

    def message(self, message: Message) -> Message:
        content = self.text(message.content)
        calls = tuple(self.call(call) for call in message.tool_calls)
        changed_calls = any(
            new is not old for new, old in zip(calls, message.tool_calls, strict=True)
        )
        if content == message.content and not changed_calls:
            return message
        return replace(message, content=content, tool_calls=calls)

    def call(self, call: ToolCall) -> ToolCall:
        args = _hide(call.args, self)
        return call if args is call.args else replace(call, args=cast("dict[str, Any]", args))


def _hide(value: object, hider: _Hider) -> object:
    """``value`` with secrets hidden in its strings (the same object when none was)."""
    return _strings(value, hider.text)


def _restore(value: object, table: Mapping[str, str]) -> Any:
    """``value`` with each placeholder in its strings back to its secret (the same object
    when none was)."""
    return _strings(
        value, lambda text: _PLACEHOLDER.sub(lambda found: table.get(found[0], found[0]), text)
    )


def _strings(value: object, change: Callable[[str], str]) -> object:
    """``value`` with ``change`` applied to every str in it, at any depth of mappings,
    lists and tuples; the very same object where nothing changed."""
    if isinstance(value, str):
        changed = change(value)
        return value if changed == value else changed
    if isinstance(value, Mapping):
        mapping = cast("Mapping[object, object]", value)
        items = {key: _strings(item, change) for key, item in mapping.items()}
        return mapping if all(items[key] is item for key, item in mapping.items()) else items
    if isinstance(value, list | tuple):
        sequence = cast("list[object] | tuple[object, ...]", value)
        new = [_strings(item, change) for item in sequence]
        if all(a is b for a, b in zip(new, sequence, strict=True)):
            return sequence
        return new if isinstance(value, list) else tuple(new)
    return value
