"""benchmarks/langchain_adapter.py runs in its quick mode and prints its ratios."""

from __future__ import annotations

import pytest

from benchmarks import langchain_adapter


def test_langchain_adapter_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """--quick times the three contenders and prints hookline's ratio to each."""
    assert langchain_adapter.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("bare", "native", "hookline"):
        assert f"\n{name} " in out
    assert "hookline/bare" in out
    assert "hookline/native" in out
