"""The front door stays true: every python block of the README, docs/ and CONTRIBUTING.md
runs, every docs page is on the README's map, every local link resolves.

Each ```python block is a test case of its own, named ``file:line`` (the line of its
opening fence), and a program of its own: no block continues another, so a reader may
copy any one of them alone. A block runs in a fresh interpreter (``python -W error``),
in a temporary directory, with this checkout first on ``sys.path``: blocks declare hook
points, set OpenTelemetry's global provider or launch DBOS, all of which are one per
process, so none of it may leak into this process or into the next block. Its script
keeps the page's line numbers, so a traceback points at the page's line. A block
touches no network (ScriptedModel, in-memory or temporary files, loopback only) and
shows what it claims with ``assert``. Blocks that are not meant to run are ```bash or
```text, never ```python.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, replace
from importlib.util import find_spec
from pathlib import Path
from typing import Final

import pytest

ROOT: Final = Path(__file__).resolve().parents[2]
README: Final = ROOT / "README.md"
DOCS: Final = ROOT / "docs"
PAGES: Final = sorted(DOCS.glob("*.md"))
TEXTS: Final = (README, *PAGES, ROOT / "CONTRIBUTING.md")

FENCE: Final = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
LANGUAGES: Final = frozenset({"python", "bash", "text", "toml", "yaml"})
LINK: Final = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
README_MAX_LINES: Final = 200


@dataclass(frozen=True)
class Block:
    """One fenced code block: its file, the line of its opening fence, language, code."""

    path: Path
    line: int
    language: str
    code: str

    @property
    def name(self) -> str:
        """``file:line``, the block's test id."""
        return f"{self.path.relative_to(ROOT).as_posix()}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """Every fenced block of ``path``, in order."""
    text = path.read_text(encoding="utf-8")
    return [
        Block(path, text.count("\n", 0, match.start()) + 1, match[1].strip(), match[2])
        for match in FENCE.finditer(text)
    ]


def programs() -> list[Block]:
    """Every python block of the README, the docs pages and CONTRIBUTING.md."""
    return [block for path in TEXTS for block in blocks(path) if block.language == "python"]


def run(block: Block, where: Path) -> subprocess.CompletedProcess[str]:
    """``block`` run by a fresh interpreter in ``where``; fails the test unless it exits 0.

    The script is named after the page and starts at the block's line on it.
    """
    script = where / f"{block.path.stem}_{block.path.suffix[1:]}.py"
    script.write_text("\n" * block.line + block.code, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), os.environ.get("PYTHONPATH")))),
    }
    done = subprocess.run(
        [sys.executable, "-W", "error", str(script)],
        cwd=where,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{block.name} failed:\n{done.stdout}{done.stderr}"
    return done


def example() -> Block:
    """The README's twenty lines: its first python block that runs the runner."""
    return next(
        block
        for block in blocks(README)
        if block.language == "python" and "runner.run(" in block.code and "import" in block.code
    )


# Blocks that import an adapter's framework are named for it (``docs/adapters.md:12
# needs langchain``): the main environment, which has both extras, runs every block;
# each adapter's own environment (`make test-langchain` / `make test-pydantic-ai`)
# selects the blocks of docs/adapters.md that need no other framework. Nothing skips: a
# block whose framework is missing fails, naming it.
NEEDS: Final = {"langchain": "test-langchain", "pydantic_ai": "test-pydantic-ai"}


def _needs(block: Block) -> list[str]:
    """The frameworks ``block`` imports."""
    return [
        module
        for module in NEEDS
        if re.search(rf"^\s*(?:from|import) {module}\b", block.code, re.MULTILINE)
    ]


def _runnable(block: Block) -> object:
    needs = _needs(block)
    name = block.name if not needs else f"{block.name} needs {' '.join(needs)}"
    return pytest.param(block, id=name)


@pytest.mark.subprocess  # each block in a fresh interpreter: the slow lane
@pytest.mark.parametrize("block", [_runnable(block) for block in programs()])
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    """The block runs to its end: every assert in it holds, no warning is raised."""
    missing = [module for module in _needs(block) if find_spec(module) is None]
    assert not missing, f"{block.name} needs {missing[0]}: make {NEEDS[missing[0]]} runs it"
    run(block, tmp_path)


def test_every_block_names_a_known_language() -> None:
    """A fence says what it holds: python runs here; bash, text, toml, yaml do not."""
    unnamed = [
        block.name for path in TEXTS for block in blocks(path) if block.language not in LANGUAGES
    ]
    assert unnamed == []


def test_readme_example_runs(tmp_path: Path) -> None:
    """The twenty-line example answers 2 + 3 through the add tool, as its comment says."""
    assert run(example(), tmp_path).stdout == "It is 5.\n"


def test_readme_example_reads_whole_numbers(tmp_path: Path) -> None:
    """Asked for 2.5 + 3, the example adds 2.5 and 3 (0.1's regex took the 5 of 2.5)."""
    block = example()
    code = block.code.replace("what is 2 + 3?", "what is 2.5 + 3?")
    assert "2.5 + 3" in code
    assert run(replace(block, code=code), tmp_path).stdout == "It is 5.5.\n"


def test_readme_example_is_short() -> None:
    """The README's example fits in about twenty lines of code."""
    lines = [line for line in example().code.splitlines() if line.strip()]
    assert len(lines) <= 24


def test_readme_names_the_two_commands() -> None:
    """The README shows `make demo` and `make test` before its example."""
    text = README.read_text(encoding="utf-8")
    assert text.index("make demo") < text.index("## Twenty lines")
    assert text.index("make test") < text.index("## Twenty lines")


def test_readme_is_short() -> None:
    """The README is the front door: at most 200 lines; the rest is in docs/."""
    assert len(README.read_text(encoding="utf-8").splitlines()) <= README_MAX_LINES


def test_every_docs_page_is_on_the_readme_map() -> None:
    """Each page of docs/ is linked from the README."""
    linked = {target.partition("#")[0] for target in links(README)}
    assert PAGES
    assert [page.name for page in PAGES if f"docs/{page.name}" not in linked] == []


@pytest.mark.parametrize("path", TEXTS, ids=lambda path: path.relative_to(ROOT).as_posix())
def test_local_links_resolve(path: Path) -> None:
    """Every link to a local file names one that exists, and its #anchor a heading in it."""
    local = [target for target in links(path) if not re.match(r"[a-z][a-z0-9+.-]*:", target)]
    assert [target for target in local if not resolves(path, target)] == []


def resolves(page: Path, target: str) -> bool:
    """Whether ``target``, a link on ``page``, names a file that exists (and its anchor)."""
    file, _, anchor = target.partition("#")
    resolved = (page.parent / file).resolve() if file else page
    if not resolved.exists():
        return False
    return not anchor or resolved.suffix != ".md" or anchor in anchors(resolved)


def links(path: Path) -> list[str]:
    """The targets of the markdown links of ``path``, outside code blocks and code spans."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def anchors(path: Path) -> set[str]:
    """The #anchors of the headings of ``path``, as GitHub makes them."""
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} +(.+?) *$", text, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found
