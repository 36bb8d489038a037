"""The pydantic-ai adapter benchmark keeps running: a quick pass checks its contenders agree."""

import asyncio

import pytest

from benchmarks import pydantic_ai_adapter
from hooks import Halt, ToolContext, ToolResult
from runner.adapters.pydantic_ai import HooklineCapability

pytestmark = pytest.mark.slow  # it runs a whole benchmark, quickly


def test_pydantic_ai_adapter_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert pydantic_ai_adapter.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for name in ("bare", "passthrough", "guarded", "audited"):
        assert f"  {name} " in out
    assert "guarded / bare (p10)" in out


class _Deny:
    def before_tool(self, ctx: ToolContext, /) -> Halt[ToolResult]:
        return Halt(ToolResult("denied"))


def test_the_benchmark_refuses_contenders_that_answer_differently() -> None:
    agents = pydantic_ai_adapter.contenders()
    agents["guarded"] = pydantic_ai_adapter.agent([HooklineCapability([_Deny()])])
    with pytest.raises(AssertionError, match="guarded answered differently"):
        asyncio.run(pydantic_ai_adapter.check(agents))
