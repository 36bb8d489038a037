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

basedpyright (strict) checks every case as well, also in one run, and must give the
same verdict: a good case passes both checkers, and a ``bad_`` case makes pyright
report errors on exactly the lines that carry ``# E:`` comments -- the same lines,
not the same messages or counts, since the two checkers word and split their errors
differently. A case on which pyright's verdict genuinely differs is listed in
``PYRIGHT_DIFFERS`` with the lines pyright reports and why; nothing is skipped. A new
case file is picked up by both checkers without further changes here. pyright also
checks ``api.py`` (which mypy checks in the project's own run).
"""

from __future__ import annotations

import contextlib
import json
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Final, NamedTuple, TypeAlias

import pytest
from mypy import api as mypy_api

pytestmark = pytest.mark.subprocess  # mypy and pyright (a process) check every case

HERE: Final = Path(__file__).resolve().parent
ROOT: Final = HERE.parents[1]
CASES_DIR: Final = HERE / "cases"
CASES: Final = sorted(CASES_DIR.glob("*.py"))
BAD: Final = [case for case in CASES if case.name.startswith("bad_")]
GOOD: Final = [case for case in CASES if not case.name.startswith("bad_")]
API: Final = HERE / "api.py"

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

# basedpyright's settings: its strict mode, as a user of the library would run it.
# ``extraPaths`` make ``hooks`` this checkout's and let cases import each other.
PYRIGHT_CONFIG: Final = {
    "typeCheckingMode": "strict",
    "pythonVersion": "3.11",
    "extraPaths": [str(ROOT), str(CASES_DIR)],
    "include": [str(path) for path in [*CASES, API]],
}
# Severities that count as a complaint; "information" is neither pass nor fail.
PYRIGHT_FAILS: Final = frozenset({"error", "warning"})


class Differs(NamedTuple):
    """The lines pyright reports errors on in a case where its verdict is not mypy's."""

    lines: tuple[int, ...]
    why: str


# Cases on which basedpyright's verdict differs from mypy's, by file stem. Every
# entry says why; an entry that agrees with the ``# E:`` lines is stale and fails.
PYRIGHT_DIFFERS: Final[dict[str, Differs]] = {}


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


@dataclass(frozen=True)
class PyrightReport:
    """One basedpyright run: the lines it complained about, by file."""

    lines: dict[Path, set[int]]
    messages: dict[Path, list[str]]  # "line: [rule] message", for assertion output
    analyzed: int
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


def parse_pyright(stdout: str, stderr: str, status: int) -> PyrightReport:
    """Group basedpyright's ``--outputjson`` diagnostics by file, keeping complaints only."""
    try:
        output = json.loads(stdout)
    except ValueError:
        msg = f"basedpyright printed no JSON (exit {status}): {stderr or stdout}"
        raise AssertionError(msg) from None
    lines: dict[Path, set[int]] = defaultdict(set)
    messages: dict[Path, list[str]] = defaultdict(list)
    for diagnostic in output["generalDiagnostics"]:
        if diagnostic["severity"] not in PYRIGHT_FAILS:
            continue
        path = Path(diagnostic["file"]).resolve()
        line = diagnostic["range"]["start"]["line"] + 1  # pyright counts from 0
        lines[path].add(line)
        rule = diagnostic.get("rule", "")
        messages[path].append(f"{line}: [{rule}] {diagnostic['message']}")
    return PyrightReport(lines, messages, output["summary"]["filesAnalyzed"], stderr, status)


@pytest.fixture(scope="session")
def pyright(tmp_path_factory: pytest.TempPathFactory) -> PyrightReport:
    """Run basedpyright once over every case file and ``api.py``."""
    tmp = tmp_path_factory.mktemp("pyright")
    config = tmp / "pyrightconfig.json"
    config.write_text(json.dumps(PYRIGHT_CONFIG), encoding="utf-8")
    # --pythonpath: the interpreter running the tests, so ``returns`` and
    # ``typing_extensions`` resolve to the installed ones.
    args = ["--outputjson", f"--pythonpath={sys.executable}", f"--project={config}"]
    done = subprocess.run(
        [sys.executable, "-m", "basedpyright", *args],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        timeout=300,
    )
    return parse_pyright(done.stdout, done.stderr, done.returncode)


def pyright_expects(case: Path) -> tuple[int, ...]:
    """The lines pyright must report errors on: mypy's ``# E:`` lines unless listed."""
    differs = PYRIGHT_DIFFERS.get(case.stem)
    if differs is not None:
        return differs.lines
    return tuple(sorted({line for line, _, _ in expectations(case).errors}))


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


def test_pyright_ran_cleanly(pyright: PyrightReport) -> None:
    """basedpyright exits normally, says nothing on stderr and analyzed every file given."""
    assert pyright.stderr == ""
    assert pyright.status in {0, 1}  # other codes mean a crash, a bad config or no files
    assert pyright.analyzed == len(PYRIGHT_CONFIG["include"])
    assert set(pyright.lines) <= {*CASES, API}


def test_pyright_accepts_api(pyright: PyrightReport) -> None:
    """``api.py``, the typical use mypy accepts, is accepted by pyright too."""
    assert pyright.messages.get(API, []) == []


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.stem)
def test_pyright_gives_mypys_verdict(case: Path, pyright: PyrightReport) -> None:
    """pyright reports errors on exactly the lines mypy must (none for a good case)."""
    reported = tuple(sorted(pyright.lines.get(case, set())))
    expected = pyright_expects(case)
    hint = "a genuine difference goes in PYRIGHT_DIFFERS, with the reason"
    assert reported == expected, (hint, pyright.messages.get(case, []))


def test_pyright_differences_are_current() -> None:
    """Each ``PYRIGHT_DIFFERS`` entry names a case, says why, and really differs."""
    stems = {case.stem for case in CASES}
    for stem, differs in PYRIGHT_DIFFERS.items():
        assert stem in stems, f"{stem}: no such case"
        assert differs.why.strip(), f"{stem}: say why pyright's verdict differs"
        case = CASES_DIR / f"{stem}.py"
        mypy_lines = tuple(sorted({line for line, _, _ in expectations(case).errors}))
        assert differs.lines != mypy_lines, f"{stem}: pyright agrees with mypy; drop the entry"
