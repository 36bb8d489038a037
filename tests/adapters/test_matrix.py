"""The README's adapter matrix is what the recorded scenario runs say."""

from tests.adapters.matrix import README, RESULTS, render, section


def test_readme_matrix_is_the_recorded_runs() -> None:
    """The README's matrix equals the one rendered from results/*.json."""
    shown = section(README.read_text(encoding="utf-8"))
    assert shown is not None, "README.md lacks the adapter matrix markers"
    assert shown == render(), "README's matrix is stale: python -m tests.adapters.matrix"


def test_the_reference_run_is_recorded() -> None:
    """The reference Runner's column is among the results (every scenario survives there)."""
    assert (RESULTS / "runner.json").exists()
