"""docs/adapters.md's pydantic-ai code runs in the adapter's own environment."""

from pathlib import Path

import pytest

from tests.project.test_docs import DOCS, Block, blocks, run

PAGE = DOCS / "adapters.md"
PROGRAMS = [b for b in blocks(PAGE) if b.language == "python" and "pydantic_ai" in b.code]


def test_the_page_shows_the_pydantic_ai_adapter() -> None:
    assert PROGRAMS


@pytest.mark.subprocess  # each block in a fresh interpreter: the slow lane
@pytest.mark.parametrize("block", PROGRAMS, ids=lambda block: block.name)
def test_pydantic_ai_block_runs(block: Block, tmp_path: Path) -> None:
    """The block runs to its end in this environment: every assert in it holds."""
    run(block, tmp_path)
