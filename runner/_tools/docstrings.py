"""What a function's docstring says about it: a summary and one line per argument.

Two argument styles are read, the two most Python code uses:

Google (``Args:``, also ``Arguments:``, ``Parameters:``, ``Keyword Args:``)::

    Args:
        city: The city to look up.
        days (int): How many days ahead,
            from 1 to 7.

Sphinx (``:param``, also ``:arg``, ``:key``, with or without a type)::

    :param city: The city to look up.
    :param int days: How many days ahead,
        from 1 to 7.

A description spread over several lines becomes one line. This is a small reader of
those two shapes, not a docstring parser: anything else is left alone.
"""

from __future__ import annotations

import inspect
import re
from typing import Final

__all__ = ["argument_descriptions", "summary"]

_GOOGLE_SECTION: Final = re.compile(
    r"(?:Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Other Parameters):"
)
_GOOGLE_ENTRY: Final = re.compile(r"\**(?P<name>\w+)\s*(?:\([^)]*\))?\s*:(?P<text>.*)")
_SPHINX_FIELD: Final = re.compile(
    r":(?:param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?\**(?P<name>\w+)\s*:(?P<text>.*)"
)
# A line starting a Sphinx field (``:returns:``, ``:raises X:``) ends the one before it.
_FIELD: Final = re.compile(r":\w[^:]*:")


def summary(doc: str | None) -> str:
    """The first paragraph of ``doc`` on one line, without an ``Args:`` or ``:param`` part."""
    lines: list[str] = []
    for line in inspect.cleandoc(doc or "").splitlines():
        stripped = line.strip()
        if not stripped or _GOOGLE_SECTION.fullmatch(stripped) or _FIELD.match(stripped):
            if lines or stripped:
                break
            continue
        lines.append(stripped)
    return " ".join(lines)


def argument_descriptions(doc: str | None) -> dict[str, str]:
    """Each argument's description in ``doc``, by name, from Google or Sphinx style."""
    lines = inspect.cleandoc(doc or "").splitlines()
    found = _sphinx(lines)
    found.update(_google(lines))
    return {name: text for name, text in found.items() if text}


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    section: int | None = None  # the indent of the current Args: header
    entry: int | None = None  # the indent of its entries
    name = ""
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        indent = _indent(line)
        if section is not None and indent <= section:
            section = entry = None
        if section is None:
            if _GOOGLE_SECTION.fullmatch(stripped):
                section = indent
            continue
        if entry is None:
            entry = indent
        if indent == entry:
            match = _GOOGLE_ENTRY.fullmatch(stripped)
            name = "" if match is None else match["name"]
            if match is not None:
                found[name] = match["text"].strip()
        elif indent > entry and name:
            found[name] = f"{found[name]} {stripped}".strip()
    return found


def _sphinx(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    name = ""
    field = 0  # the indent of the current :param line
    for line in lines:
        stripped = line.strip()
        match = _SPHINX_FIELD.fullmatch(stripped)
        if match is not None:
            name, field = match["name"], _indent(line)
            found[name] = match["text"].strip()
        elif not stripped or _FIELD.match(stripped) or _indent(line) <= field:
            name = ""
        elif name:
            found[name] = f"{found[name]} {stripped}"
    return found
