"""Typing tests: mypy over the small programs in ``cases/``, asserting the exact errors.

Each case file uses the public ``hooks`` API the way a user would. A line that must
fail says so in a trailing comment::

    return Retry(ctx)  # E: [return-value] Incompatible return value type (got "Retry[...

``# E: [code] text`` expects an error with that code on that line whose message
contains ``text``; a case must report exactly its ``# E:`` errors and no others.
``# N: text`` expects a note containing ``text`` on that line (notes not listed are
not checked). Several expectations may share a line. Files named ``bad_*`` must
expect errors; every other file must type-check cleanly.

mypy runs once over every case together (cases may import each other), with the
settings given on the command line instead of read from the project's ``mypy.ini``.
"""

from __future__ import annotations

import contextlib
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypeAlias

import pytest
from mypy import api as mypy_api

HERE: Final = Path(__file__).resolve().parent
ROOT: Final = HERE.parents[1]
CASES_DIR: Final = HERE / "cases"
CASES: Final = sorted(CASES_DIR.glob("*.py"))
BAD: Final = [case for case in CASES if case.name.startswith("bad_")]
GOOD: Final = [case for case in CASES if not case.name.startswith("bad_")]

FLAGS: Final = (
    "--python-version=3.11",
    "--strict",
    "--warn-unreachable",
    "--extra-checks",
    # The project's extra error codes (mypy.ini), so snippets meet the same bar.
    "--enable-error-code=ignore-without-code",
    "--enable-error-code=redundant-expr",
    "--enable-error-code=truthy-bool",
    "--enable-error-code=possibly-undefined",
    # Case files are top-level modules (``import good_module_cb``), not tests.typing.cases.*.
    "--explicit-package-bases",
    "--no-incremental",
    "--show-error-codes",
    "--no-error-summary",
    "--show-absolute-path",
    "--no-pretty",
    "--no-color-output",
    "--soft-error-limit=-1",
)

# path:line: severity: message  [code]   (notes carry no code)
_REPORTED: Final = re.compile(
    r"(?P<path>.+?):(?P<line>\d+): (?P<severity>error|note): (?P<message>.*?)"
    r"(?:  \[(?P<code>[a-z0-9-]+)\])?"
)
# "# E: [code] text" or "# N: text", up to the next expectation on the line.
_EXPECTED: Final = re.compile(r"#\s*(?P<kind>[EN]):\s*(?P<body>.*?)\s*(?=#\s*[EN]:|$)")
_CODED: Final = re.compile(r"\[(?P<code>[a-z0-9-]+)\]\s+(?P<text>\S.*)")

Error: TypeAlias = tuple[int, str, str]  # line, error code, message (or expected fragment)
Note: TypeAlias = tuple[int, str]  # line, message (or expected fragment)


@dataclass(frozen=True)
class Expected:
    """The errors and notes a case file's comments ask for."""

    errors: list[Error]
    notes: list[Note]


@dataclass(frozen=True)
class Report:
    """One mypy run, its diagnostics grouped by case file."""

    errors: dict[Path, list[Error]]
    notes: dict[Path, list[Note]]
    stray: list[str]  # output lines that are not about a case file
    stderr: str
    status: int


def expectations(case: Path) -> Expected:
    """Read the ``# E:`` and ``# N:`` comments of ``case``."""
    errors: list[Error] = []
    notes: list[Note] = []
    for number, line in enumerate(case.read_text(encoding="utf-8").splitlines(), start=1):
        for found in _EXPECTED.finditer(line):
            body = found["body"]
            if found["kind"] == "N":
                notes.append((number, body))
                continue
            coded = _CODED.fullmatch(body)
            if coded is None:
                msg = f"{case.name}:{number}: write '# E: [error-code] message', got {body!r}"
                raise ValueError(msg)
            errors.append((number, coded["code"], coded["text"]))
    return Expected(errors, notes)


def parse(stdout: str, stderr: str, status: int) -> Report:
    """Group mypy's output lines by case file; keep the rest as stray."""
    cases = set(CASES)
    errors: dict[Path, list[Error]] = defaultdict(list)
    notes: dict[Path, list[Note]] = defaultdict(list)
    stray: list[str] = []
    for line in stdout.splitlines():
        found = _REPORTED.fullmatch(line)
        path = Path(found["path"]).resolve() if found else None
        if found is None or path not in cases:
            stray.append(line)
        elif found["severity"] == "note":
            notes[path].append((int(found["line"]), found["message"]))
        else:
            errors[path].append((int(found["line"]), found["code"] or "", found["message"]))
    return Report(errors, notes, stray, stderr, status)


def reconcile(expected: list[Error], reported: list[Error]) -> list[Error]:
    """Replace each reported error by the expectation it meets, so a diff shows only misses."""
    unmet = list(expected)
    result: list[Error] = []
    for line, code, message in reported:
        meets = next((e for e in unmet if e[:2] == (line, code) and e[2] in message), None)
        if meets is None:
            result.append((line, code, message))
        else:
            unmet.remove(meets)
            result.append(meets)
    return sorted(result)


@pytest.fixture(scope="session")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """Run mypy once over every case file."""
    assert CASES, "no case files found"
    tmp = tmp_path_factory.mktemp("mypy")
    config = tmp / "mypy.ini"
    # The one setting without a flag; every other one is in FLAGS.
    config.write_text(f"[mypy]\nmypy_path = {CASES_DIR}\n", encoding="utf-8")
    args = [*FLAGS, f"--config-file={config}", f"--cache-dir={tmp / 'cache'}", *map(str, CASES)]
    # mypy searches its working directory first: run from the root so ``hooks`` is
    # this checkout's, wherever pytest was started.
    with contextlib.chdir(ROOT):
        stdout, stderr, status = mypy_api.run(args)
    return parse(stdout, stderr, status)


def test_mypy_ran_cleanly(report: Report) -> None:
    """mypy exits normally and reports nothing about files other than the cases."""
    assert report.stderr == ""
    assert report.stray == []
    assert report.status in {0, 1}  # 2 would mean a crash or a bad command line


@pytest.mark.parametrize("case", GOOD, ids=lambda case: case.stem)
def test_good_case_passes(case: Path, report: Report) -> None:
    """A case without expectations type-checks with no errors."""
    assert expectations(case) == Expected([], [])
    assert report.errors.get(case, []) == []


@pytest.mark.parametrize("case", BAD, ids=lambda case: case.stem)
def test_bad_case_reports_exactly_its_errors(case: Path, report: Report) -> None:
    """A ``bad_`` case reports exactly the errors its comments expect, with their notes."""
    expected = expectations(case)
    assert expected.errors, f"{case.name} expects no error; name it without 'bad_'"
    assert reconcile(expected.errors, report.errors.get(case, [])) == sorted(expected.errors)
    reported_notes = report.notes.get(case, [])
    missing = [
        (line, text)
        for line, text in expected.notes
        if not any(at == line and text in note for at, note in reported_notes)
    ]
    assert missing == []
