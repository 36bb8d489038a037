"""``examples/providers.py``: one guarded agent, offline and on each provider's wire format.

The same callbacks halt the destructive tool whatever the model: on the embedded model,
on a loopback Responses server, a Chat Completions server and an Anthropic server; the
refusal is what goes back to the provider, and the note is never deleted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from examples import providers
from runner import AnthropicModel, Model, OpenAIChatModel, OpenAIResponsesModel, RunResult
from tests.helpers import ROOT
from tests.helpers import anthropic_server as anthropic_api
from tests.helpers.openai_server import OpenAIServer, completion, forget_environment, tool_call
from tests.helpers.responses_server import ResponsesServer, function_call, message, response

REFUSAL = "delete_note is destructive and this agent may not use it"


def check(done: list[tuple[RunResult, list[str]]]) -> None:
    """The three turns: the note read, the delete halted by NoDestruction, the list."""
    decided = [lines for _, lines in done]
    assert decided[1] == ["before_tool delete_note: halt (NoDestruction instance)"]
    assert providers.NOTES["groceries"] == "eggs, milk, bread"


def test_offline_the_guard_halts_the_destructive_tool() -> None:
    """On the embedded model: the answers are the tools' results and the refusal."""
    done = providers.run(providers.offline_model())
    assert [result.output for result, _ in done] == [
        "eggs, milk, bread",
        REFUSAL,
        "groceries, todo",
    ]
    check(done)


@pytest.mark.subprocess
def test_main_prints_each_turn_and_who_decided() -> None:
    """``python -m examples.providers`` needs no network and shows the halt."""
    completed = subprocess.run(
        [sys.executable, "-m", "examples.providers"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert "model: ScriptedModel" in completed.stdout
    assert "before_tool delete_note: halt (NoDestruction instance)" in completed.stdout


def run_on(model: Model) -> list[tuple[RunResult, list[str]]]:
    """The example's turns on ``model``, its clients closed after."""
    try:
        return providers.run(model)
    finally:
        model.close()  # type: ignore[attr-defined]


def test_on_the_responses_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal goes back as the delete call's function_call_output."""
    forget_environment(monkeypatch)
    with ResponsesServer() as server:
        server.script(
            response(function_call("c1", "read_note", '{"name": "groceries"}')),
            response(message("Eggs, milk and bread.")),
            response(function_call("c2", "delete_note", '{"name": "groceries"}')),
            response(message("I may not delete notes.")),
            response(function_call("c3", "list_notes", "{}")),
            response(message("groceries and todo.")),
        )
        done = run_on(OpenAIResponsesModel("test-model", base_url=server.url, api_key="k"))
    check(done)
    outputs = [item for item in server.bodies[3]["input"] if item["type"] == "function_call_output"]
    assert outputs[-1]["output"] == REFUSAL
    assert server.bodies[0]["tools"][2]["name"] == "delete_note"


def test_on_chat_completions(server: OpenAIServer) -> None:
    """The refusal goes back as the delete call's tool message."""
    server.script(
        completion(tool_calls=[tool_call("c1", "read_note", '{"name": "groceries"}')]),
        completion("Eggs, milk and bread."),
        completion(tool_calls=[tool_call("c2", "delete_note", '{"name": "groceries"}')]),
        completion("I may not delete notes."),
        completion(tool_calls=[tool_call("c3", "list_notes", "{}")]),
        completion("groceries and todo."),
    )
    done = run_on(OpenAIChatModel("test-model", base_url=server.url, api_key="k"))
    check(done)
    assert server.bodies[3]["messages"][-1] == {
        "role": "tool",
        "content": REFUSAL,
        "tool_call_id": "c2",
    }


def test_on_the_messages_api(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusal goes back as the delete call's tool_result, marked an error."""
    anthropic_api.forget_environment(monkeypatch)
    with anthropic_api.AnthropicServer() as server:
        server.script(
            anthropic_api.message(anthropic_api.tool_use("t1", "read_note", {"name": "groceries"})),
            anthropic_api.message(anthropic_api.text("Eggs, milk and bread.")),
            anthropic_api.message(
                anthropic_api.tool_use("t2", "delete_note", {"name": "groceries"})
            ),
            anthropic_api.message(anthropic_api.text("I may not delete notes.")),
            anthropic_api.message(anthropic_api.tool_use("t3", "list_notes", {})),
            anthropic_api.message(anthropic_api.text("groceries and todo.")),
        )
        done = run_on(AnthropicModel("claude-test", base_url=server.url, api_key="sk-ant-test"))
    check(done)
    last = server.bodies[3]["messages"][-1]
    assert last["content"][0]["tool_use_id"] == "t2"
    assert last["content"][0]["is_error"] is True
    assert REFUSAL in json.dumps(last)
    assert server.bodies[0]["system"] == providers.agent(providers.offline_model()).instruction


def test_make_demo_runs_it() -> None:
    """``make demo`` shows the providers example too, offline."""
    makefile = (ROOT / "Makefile").read_text()
    assert "examples.providers" in makefile.split("demo:", 1)[1].split("\n\n", 1)[0]
