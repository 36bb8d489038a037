"""The import contracts in pyproject.toml hold; each, when broken, fails naming the import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = Path(sys.executable).parent / "lint-imports"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` run on the tree at ``root``, its packages first on the path."""
    return subprocess.run(
        [str(LINT), "--no-cache"],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        timeout=120,
        check=False,
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A copy of hooks/, runner/ and pyproject.toml to break."""
    for package in ("hooks", "runner"):
        shutil.copytree(
            ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_the_contracts_hold() -> None:
    """Every contract is kept by the tree as it is."""
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


BREAKS = [
    pytest.param(
        "hooks/_spelling.py",
        "import runner._errors\n",
        "hooks._spelling -> runner._errors",
        id="hooks-imports-runner",
    ),
    pytest.param(
        "runner/_sessions/leases.py",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import runner._sessions.store\n",
        "allowed in runner._sessions.\nIt could be made acyclic by removing 1 dependency:\n\n"
        "- .store -> .leases",
        id="circle-under-type-checking",
    ),
    pytest.param(
        "runner/_models/transient.py",
        "import runner._run.plan\n",
        "runner._models.transient -> runner._run.plan",
        id="a-provider-imports-the-loop",
    ),
    pytest.param(
        "runner/_telemetry/genai.py",
        "import runner._run.guarded\n",
        "runner._telemetry.genai -> runner._run.guarded",
        id="telemetry-reaches-into-the-loop",
    ),
]


@pytest.mark.parametrize(("module", "line", "named"), BREAKS)
def test_a_broken_contract_names_the_import(tree: Path, module: str, line: str, named: str) -> None:
    """One import added against the layers fails the check, and the report names it."""
    path = tree / module
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("from __future__ import annotations\n")
    path.write_text(f"{head}from __future__ import annotations\n{line}{rest}", encoding="utf-8")
    done = lint(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert named in done.stdout
