"""The version says what the code is: ``pyproject.toml``, the CHANGELOG, the installed
metadata and ``hooks.__version__`` agree.

The rule: ``pyproject.toml``'s version is exactly the CHANGELOG's top entry, dated or
``unreleased`` (the heading says which). ``hooks.__version__`` is the installed
distribution's metadata, which an install writes from ``pyproject.toml``: a tree whose
``pyproject.toml`` moved since it was installed must be installed again (``make`` does
it, its stamp depends on ``pyproject.toml``). Telemetry's instrumentation scope carries
``hooks.__version__`` (``tests/runner/telemetry/test_setup.py``).
"""

from __future__ import annotations

import json
import re
import tomllib
from importlib.metadata import distribution
from pathlib import Path
from urllib.parse import unquote, urlparse

import hooks
from tests.helpers import ROOT

_HEADING = re.compile(r"^## (\d+\.\d+\.\d+) — (unreleased|\d{4}-\d{2}-\d{2})$", re.MULTILINE)


def project_version(root: Path) -> str:
    """The version ``pyproject.toml`` at ``root`` declares."""
    with (root / "pyproject.toml").open("rb") as file:
        version: str = tomllib.load(file)["project"]["version"]
    return version


def top_entry() -> tuple[str, str]:
    """The CHANGELOG's first version heading: its version and ``unreleased`` or its date."""
    found = _HEADING.search((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert found is not None, "CHANGELOG.md has no '## X.Y.Z — unreleased|YYYY-MM-DD' heading"
    return found[1], found[2]


def test_the_version_is_the_changelogs_top_entry() -> None:
    """``pyproject.toml`` declares the top entry's version, released or not."""
    entry, when = top_entry()
    assert project_version(ROOT) == entry, (project_version(ROOT), entry, when)


def test_the_top_entry_is_the_newest_version() -> None:
    """Versions in the CHANGELOG descend: the top entry is the newest."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = [
        tuple(int(part) for part in found[1].split(".")) for found in _HEADING.finditer(text)
    ]
    assert len(versions) >= 2
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions)


def test_the_installed_metadata_is_its_trees_version() -> None:
    """The installed hookline's metadata version is the version its source tree declares
    (the tree an editable install points at, else this one), and ``hooks.__version__``
    is that metadata: an install older than its ``pyproject.toml`` fails here."""
    installed = distribution("hookline")
    direct = installed.read_text("direct_url.json")
    origin: dict[str, object] = json.loads(direct) if direct else {}
    url = urlparse(str(origin.get("url", "")))
    tree = Path(unquote(url.path)) if url.scheme == "file" else ROOT
    if not (tree / "pyproject.toml").is_file():  # installed from an archive: this tree
        tree = ROOT
    assert installed.version == project_version(tree), (
        f"hookline {installed.version} is installed from {tree}, whose pyproject.toml says "
        f"{project_version(tree)}: install it again (make does)"
    )
    assert hooks.__version__ == installed.version
