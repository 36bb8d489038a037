"""The README stays true: its example runs and prints what it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def _example() -> str:
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    return str(next(block for block in blocks if "runner.run(" in block and "import" in block))


def test_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """The twenty-line example answers 2 + 3 through the add tool, as its comment says."""
    exec(compile(_example(), str(README), "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out == "It is 5.\n"


def test_readme_example_is_short() -> None:
    """The README's example fits in about twenty lines of code."""
    lines = [line for line in _example().splitlines() if line.strip()]
    assert len(lines) <= 24


def test_readme_names_the_two_commands() -> None:
    """The README shows `make demo` and `make test` first."""
    text = README.read_text(encoding="utf-8")
    assert text.index("make demo") < text.index("## Twenty lines")
    assert text.index("make test") < text.index("## Twenty lines")


def test_readme_example_reads_whole_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    """Asked for 2.5 + 3, the example adds 2.5 and 3 (0.1's regex took the 5 of 2.5)."""
    example = _example().replace("what is 2 + 3?", "what is 2.5 + 3?")
    exec(compile(example, str(README), "exec"), {"__name__": "readme_example"})
    assert capsys.readouterr().out == "It is 5.5.\n"
