"""The README's adapter matrix, written from the scenario suite's recorded outcomes.

Each framework's run records, per scenario, ``None`` (the verb survives) or the reason
it cannot (a strict xfail) in ``results/<framework>.json``; ``render`` lays those files
out as a table of verbs by frameworks, and ``python -m tests.adapters.matrix`` writes it
between the README's markers (``tests/adapters/test_matrix.py`` fails when they differ).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TypeAlias

from tests.adapters.scenarios import SCENARIOS

__all__ = ["Column", "load", "main", "render", "results_path", "save"]

Column: TypeAlias = dict[str, str | None]
"""Scenario name -> ``None`` (survives) or why the framework cannot express it."""

RESULTS = Path(__file__).parent / "results"
README = Path(__file__).parents[2] / "README.md"
START = "<!-- adapter matrix: written by python -m tests.adapters.matrix -->"
END = "<!-- end of adapter matrix -->"
ORDER = ("Runner", "LangChain", "pydantic-ai")  # the reference first, then the adapters


def results_path(framework: str) -> Path:
    """Where ``framework``'s recorded outcomes live."""
    slug = re.sub(r"[^a-z0-9]+", "-", framework.lower()).strip("-")
    return RESULTS / f"{slug}.json"


def save(framework: str, column: Column) -> None:
    """Write ``framework``'s outcomes, scenarios in suite order."""
    RESULTS.mkdir(exist_ok=True)
    data = {"framework": framework, "scenarios": column}
    results_path(framework).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def load(path: Path) -> Column | None:
    """The outcomes in ``path``, ``None`` when there is no such file."""
    if not path.exists():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    scenarios: Column = data["scenarios"]
    return scenarios


def _columns() -> list[tuple[str, Column]]:
    found: dict[str, Column] = {}
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        found[data["framework"]] = data["scenarios"]
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(found.items(), key=lambda item: (rank.get(item[0], len(ORDER)), item[0]))


def render() -> str:
    """The matrix as markdown: a row per verb, a column per framework, reasons as notes."""
    columns = _columns()
    lines = [
        "| verb | " + " | ".join(name for name, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    notes: list[str] = []
    for scenario in SCENARIOS:
        cells = []
        for _, column in columns:
            if scenario.name not in column:
                cells.append("not run")
                continue
            reason = column[scenario.name]
            if reason is None:
                cells.append("yes")
            else:
                if reason not in notes:
                    notes.append(reason)
                cells.append(f"no ({notes.index(reason) + 1})")
        lines.append(f"| {scenario.verb} | " + " | ".join(cells) + " |")
    if notes:
        lines.append("")
        lines.extend(f"{i}. {note}" for i, note in enumerate(notes, 1))
    return "\n".join(lines)


def section(text: str) -> str | None:
    """The matrix between the markers of ``text``, ``None`` without them."""
    match = re.search(re.escape(START) + r"\n(.*?)" + re.escape(END), text, re.DOTALL)
    return None if match is None else match.group(1).removesuffix("\n")


def main() -> None:
    """Write the rendered matrix between the README's markers."""
    text = README.read_text(encoding="utf-8")
    if section(text) is None:
        msg = f"{README} has no adapter matrix markers ({START!r} ... {END!r})"
        raise SystemExit(msg)
    start = text.index(START) + len(START) + 1
    end = text.index(END)
    README.write_text(text[:start] + render() + "\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
