"""``examples/structured.py`` runs and does what its docstring says."""

from __future__ import annotations

import subprocess
import sys

import pytest

from examples import structured
from runner import ModelResponse, ScriptedModel, ToolCall
from tests.helpers import ROOT


def test_the_invoice_is_typed_after_one_retry_with_feedback() -> None:
    """The tool converts with the run's rates; the misfit is told why; the invoice comes."""
    result = structured.run_demo()
    assert result.output == structured.Invoice(number="INV-7", customer="ACME Ltd", total_eur=92.0)
    assert structured.trace(result.events) == [
        "tool to_eur -> 92.0",
        "answer 1 does not fit",
        "asked again (answer 2)",
        "  feedback: The arguments of final_result do not fit its schema:",
        "  feedback: - total_eur: Input should be a valid number, unable to parse string as a"
        " number",
        "  feedback: Call final_result again with arguments that fit.",
    ]


def test_the_output_guard_refuses_an_invoice_over_the_limit() -> None:
    """``Limit`` fails the run on an invoice above 1000 EUR: no value comes out."""
    args = {"number": "INV-8", "customer": "ACME Ltd", "total_eur": 5000}
    model = ScriptedModel([ModelResponse(tool_calls=(ToolCall("c1", "final_result", args),))])
    with pytest.raises(PermissionError, match="INV-8 is over 1000"):
        structured.run_demo(model)


@pytest.mark.subprocess
def test_the_program_prints_the_trace_and_the_invoice() -> None:
    """``python -m examples.structured`` ends with the typed invoice."""
    done = subprocess.run(
        [sys.executable, "-m", "examples.structured"],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=60,
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "tool to_eur -> 92.0"
    assert lines[-1] == "output: Invoice(number='INV-7', customer='ACME Ltd', total_eur=92.0)"
