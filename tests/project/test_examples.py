"""Every program in examples/ runs and does what its docstring says."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from examples import (
    approval,
    custom_point,
    durable,
    error_handlers,
    quickstart,
    sessions,
    streaming,
    tracing,
    typed_callbacks,
    wraps,
)
from runner import (
    ModelAttemptEvent,
    OpenAIChatModel,
    OpenAIResponsesModel,
    ScriptedModel,
    SQLiteSessionStore,
    ToolAttemptEvent,
    UserMessageEvent,
)
from tests.helpers import ROOT
from tests.helpers.openai_server import OpenAIServer, completion, forget_environment, tool_call
from tests.helpers.responses_server import ResponsesServer, function_call, message, response


@pytest.fixture(scope="module")
def demo() -> quickstart.Demo:
    """The quickstart's four turns, run once for the tests that only read them."""
    return quickstart.run_demo()


def _outcomes(turn: quickstart.Turn) -> list[tuple[str, str | None, int, str]]:
    return [(event.point, event.tool, event.attempt, event.outcome) for event in turn.hook_events]


def test_quickstart_answers(demo: quickstart.Demo) -> None:
    """Each message gets the answer its callbacks and tools lead to."""
    assert [turn.result.output for turn in demo.turns] == [
        "It is 5.",
        "It's 18°C, light rain in Paris.",
        "I can't help with that.",
        "Done: the notes went to <email>.",
    ]
    assert {turn.result.status for turn in demo.turns} == {"completed"}


def test_quickstart_calculator_hooks_in_order(demo: quickstart.Demo) -> None:
    """The sum runs model, tool, model between before_agent and after_agent."""
    assert _outcomes(demo.turns[0]) == [
        ("before_agent", None, 1, "cont"),
        ("before_model", None, 1, "cont"),
        ("after_model", None, 1, "success"),
        ("before_tool", "add", 1, "cont"),
        ("after_tool", "add", 1, "success"),
        ("before_model", None, 1, "cont"),
        ("after_model", None, 1, "success"),
        ("after_agent", None, 1, "success"),
    ]


def test_quickstart_retries_the_flaky_tool(demo: quickstart.Demo) -> None:
    """The weather tool fails once, the retry handler retries, and attempt 2 succeeds."""
    tool_events = [event for event in _outcomes(demo.turns[1]) if event[1] == "weather"]
    assert tool_events == [
        ("before_tool", "weather", 1, "cont"),
        ("on_tool_error", "weather", 1, "retry"),
        ("after_tool", "weather", 2, "success"),
    ]


def test_quickstart_guard_halts_before_any_model_call(demo: quickstart.Demo) -> None:
    """The request for a password halts at before_agent and never reaches the model."""
    assert _outcomes(demo.turns[2]) == [("before_agent", None, 1, "halt")]
    assert isinstance(demo.model, ScriptedModel)
    last_user_messages = [request.messages[-1].content for request in demo.model.requests]
    assert not any("password" in content for content in last_user_messages)


def test_quickstart_model_never_sees_an_email(demo: quickstart.Demo) -> None:
    """Every request the model received has its email addresses redacted."""
    assert isinstance(demo.model, ScriptedModel)
    contents = [m.content for request in demo.model.requests for m in request.messages]
    assert "send the notes to <email>" in contents
    assert not any("@" in content for content in contents)
    asked = demo.turns[3].result.events[0]
    assert isinstance(asked, UserMessageEvent)
    assert asked.message.content.endswith("@example.com")  # the run itself keeps the original


def test_quickstart_prints_a_short_trace(capsys: pytest.CaptureFixture[str]) -> None:
    """main() prints each hook point with its outcome, the retry, the halt and the answers."""
    quickstart.main()
    out = capsys.readouterr().out
    assert "answer: It is 5." in out
    assert "-> calls add(a=2, b=3)" in out
    assert "on_tool_error  weather #1  retry" in out
    assert "after_tool     weather #2  success" in out
    assert "before_agent     assistant   halt" in out
    assert "answer: Done: the notes went to <email>." in out
    assert "µs" in out
    assert 30 <= len(out.splitlines()) <= 50


@pytest.mark.subprocess
def test_quickstart_runs_as_a_module() -> None:
    """`python -m examples.quickstart`, what `make demo` runs, exits 0 and prints the trace."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "examples.quickstart"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        encoding="utf-8",
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "user: what is 2 + 3?" in done.stdout
    assert "answer: It is 5." in done.stdout
    assert "answer: I can't help with that." in done.stdout


def test_error_handlers_retry_fallback_and_failure() -> None:
    """The handlers retry the model, fall back for the tool, and pass a permanent error on."""
    timeout, failing_tool, revoked, _ = error_handlers.run_cases()
    assert [(e.point, e.attempt, e.outcome) for e in timeout.handled] == [
        ("on_model_error", 1, "retry")
    ]
    assert timeout.answer == "Here is what I know about hookline."
    assert [(e.tool, e.attempt, e.outcome) for e in failing_tool.handled] == [
        ("search", 1, "retry"),
        ("search", 2, "retry"),
        ("search", 3, "fallback"),
    ]
    assert failing_tool.answer == "Search said: search is unavailable; answer without it."
    assert [(e.point, e.outcome) for e in revoked.handled] == [("on_model_error", "failure")]
    assert isinstance(revoked.error, PermissionError)
    assert revoked.answer is None


def test_error_handlers_ready_made_retry_then_fall_back() -> None:
    """RetryTransient retries the 429s while attempts remain, then FallbackModel answers."""
    rate_limited = error_handlers.run_cases()[3]
    assert [(e.attempt, e.outcome, e.callback) for e in rate_limited.handled] == [
        (1, "retry", "RetryTransient instance"),
        (2, "retry", "RetryTransient instance"),
        (3, "fallback", "FallbackModel instance"),
    ]
    assert {type(e.error) for e in rate_limited.handled} == {error_handlers.RateLimited}
    assert rate_limited.answer == "The backup model says: hookline is a hook system."


def test_error_handlers_main_prints_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    """main() prints one block per case, ending in the answer or the raised error."""
    error_handlers.main()
    out = capsys.readouterr().out
    assert "on_tool_error search #3 -> fallback" in out
    assert "run() raised PermissionError: API key revoked" in out
    assert "on_model_error model #3 -> fallback by FallbackModel instance  RateLimited" in out


def test_typed_callbacks_refuse_cut_and_stop() -> None:
    """Inspector refuses delete_file and cuts long results; the budget module stops a loop."""
    (_, tidy_log, tidy_answer), (_, loop_log, loop_answer) = typed_callbacks.run_inspected()
    assert "before_tool   delete_file -> halt (needs a human)" in tidy_log
    assert "after_tool    success: 131 chars, cut" in tidy_log
    assert tidy_answer == "I read notes.txt; deleting it needs you."
    assert sum(line.startswith("before_model") for line in loop_log) == 3
    assert loop_answer == "(stopped: 3 model calls is this run's budget)"


def test_typed_callbacks_main_prints_both_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """main() prints each message, Inspector's log and the answer."""
    typed_callbacks.main()
    out = capsys.readouterr().out
    assert "user: tidy up notes.txt" in out
    assert "answer: (stopped: 3 model calls is this run's budget)" in out


def test_custom_point_rewrite_retry_cache_fallback() -> None:
    """The declared points rewrite the query, retry a timeout, serve the cache and fall back."""
    index = custom_point.Index(custom_point.DOCS)
    retriever = custom_point.Retriever(
        [custom_point.Rewrite(), custom_point.Cache(), custom_point.RecoverIndex()], index
    )
    first = retriever.retrieve("How do HOOK points find callbacks?")
    assert [doc.id for doc in first] == ["points", "runner"]
    assert index.searches == 2  # one timeout, one retry
    assert retriever.retrieve("how do hook points find callbacks") == first
    assert index.searches == 2  # the cache halted: no search
    assert retriever.retrieve("???") == []
    assert "  on_retrieval_error -> fallback: []" in retriever.log


def test_custom_point_main_prints_the_flow(capsys: pytest.CaptureFixture[str]) -> None:
    """main() prints every dispatch of the three retrievals."""
    custom_point.main()
    out = capsys.readouterr().out
    assert "before_retrieval -> halt: [points, runner], search skipped" in out
    assert "on_retrieval_error -> retry" in out


def test_wraps_time_cache_and_validate() -> None:
    """The timing wrap sees both tool attempts, the cache answers the second, the validator
    sends an impolite answer back once per run with feedback, and the model obliges."""
    demo = wraps.run_demo()
    assert [result.output for result in demo.results] == ["Please note: It is 16."] * 2
    assert [name for name, _ in demo.timing.timings] == ["square", "square"]
    assert demo.cache.hits == 1
    first, second = demo.results
    assert len([e for e in first.events if isinstance(e, ToolAttemptEvent)]) == 1
    assert [e for e in second.events if isinstance(e, ToolAttemptEvent)] == []  # cached
    assert demo.validate.feedback == ["say please", "say please"]
    sent = [e.request for e in first.events if isinstance(e, ModelAttemptEvent)]
    assert "was rejected: say please" in sent[-1].messages[-1].content


def test_validate_gives_up_after_its_tries() -> None:
    """An answer that never passes comes back as a Failure naming the problem."""
    from hooks import Failure, ModelResponse, Success

    validate = wraps.Validate(lambda response: "always wrong", tries=3)
    calls: list[int] = []

    def call_next(ctx: object) -> Success[ModelResponse]:
        calls.append(1)
        return Success(ModelResponse("no"))

    from hooks import Invocation
    from runner import Message, ModelContext, ModelRequest

    ctx = ModelContext(Invocation("r", "a", "a"), ModelRequest((Message("user", "hi"),)))
    outcome = validate.wrap_model(ctx, call_next)
    assert len(calls) == 3
    assert isinstance(outcome, Failure)
    assert "failed validation: always wrong" in str(outcome.failure())


def test_wraps_main_prints_what_each_wrap_did(capsys: pytest.CaptureFixture[str]) -> None:
    """The example's output names the answers, the cache hits and the feedback."""
    wraps.main()
    out = capsys.readouterr().out
    assert "cache hits: 1" in out
    assert "answer: Please note: It is 16." in out


def test_quickstart_takes_its_model_from_hookline_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Unset: the scripted model; ``openai:`` the Responses API, ``openai-chat:`` Chat
    Completions; a malformed HOOKLINE_MODEL is refused with the three formats."""
    monkeypatch.delenv("HOOKLINE_MODEL", raising=False)
    assert isinstance(quickstart.model_from_env(), ScriptedModel)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("HOOKLINE_MODEL", "openai:gpt-5.5")
    responses_model = quickstart.model_from_env()
    assert isinstance(responses_model, OpenAIResponsesModel)
    assert responses_model.model == "gpt-5.5"
    monkeypatch.setenv("HOOKLINE_MODEL", "openai-chat:llama3.2")
    chat_model = quickstart.model_from_env()
    assert isinstance(chat_model, OpenAIChatModel)
    assert chat_model.model == "llama3.2"
    for spec in ("gpt-4o-mini", "openai:", "anthropic-chat:x", "anthropic:"):
        monkeypatch.setenv("HOOKLINE_MODEL", spec)
        with pytest.raises(
            SystemExit,
            match=r"'openai:<model name>'.*'openai-chat:<model name>'.*'anthropic:<model name>'",
        ):
            quickstart.model_from_env()


def test_quickstart_runs_against_a_real_responses_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """With HOOKLINE_MODEL=openai:... and OPENAI_BASE_URL set, the quickstart talks to that
    Responses server: the same callbacks fire, and the redacted email never goes over the
    wire."""
    forget_environment(monkeypatch)
    with ResponsesServer() as responses:
        responses.script(
            response(function_call("c1", "add", '{"a": 2, "b": 3}')),
            response(message("It is 5.")),
            response(function_call("c2", "weather", '{"city": "Paris"}')),
            response(message("Rainy in Paris.")),
            response(message("Sent.")),
        )
        monkeypatch.setenv("HOOKLINE_MODEL", "openai:test-model")
        monkeypatch.setenv("OPENAI_BASE_URL", responses.url)
        model = quickstart.model_from_env()
        assert isinstance(model, OpenAIResponsesModel)
        try:
            demo = quickstart.run_demo(model)
        finally:
            model.close()
    assert responses.unexpected == 0
    assert [turn.result.output for turn in demo.turns] == [
        "It is 5.",
        "Rainy in Paris.",
        "I can't help with that.",
        "Sent.",
    ]
    assert responses.paths == ["/v1/responses"] * 5
    assert all(body["model"] == "test-model" for body in responses.bodies)
    assert all(body["store"] is False for body in responses.bodies)
    assert "jane.doe@example.com" not in json.dumps(responses.bodies)
    assert "<email>" in json.dumps(responses.bodies[-1])


def test_quickstart_runs_against_a_chat_completions_server(
    monkeypatch: pytest.MonkeyPatch, server: OpenAIServer
) -> None:
    """With HOOKLINE_MODEL=openai-chat:... the quickstart speaks Chat Completions."""
    server.script(
        completion(tool_calls=[tool_call("c1", "add", '{"a": 2, "b": 3}')]),
        completion("It is 5."),
        completion(tool_calls=[tool_call("c2", "weather", '{"city": "Paris"}')]),
        completion("Rainy in Paris."),
        completion("Sent."),
    )
    monkeypatch.setenv("HOOKLINE_MODEL", "openai-chat:test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    model = quickstart.model_from_env()
    assert isinstance(model, OpenAIChatModel)
    try:
        demo = quickstart.run_demo(model)
    finally:
        model.close()
    assert [turn.result.output for turn in demo.turns] == [
        "It is 5.",
        "Rainy in Paris.",
        "I can't help with that.",
        "Sent.",
    ]
    assert len(server.bodies) == 5
    assert all(body["model"] == "test-model" for body in server.bodies)
    assert "jane.doe@example.com" not in json.dumps(server.bodies)
    assert "<email>" in json.dumps(server.bodies[-1])


def test_streaming_prints_the_answer_as_it_is_written() -> None:
    """The text arrives in chunks, the tool call shows as it starts, the broken attempt is
    announced discarded, and the answers are the runs' outputs."""
    pieces: list[str] = []
    answers = asyncio.run(streaming.chat(pieces.append))
    assert answers == ["Paris: 18°C, light rain.", "Tomorrow looks sunny in Paris, 21°C."]
    shown = "".join(pieces)
    assert "[calling weather] -> Paris: 18°C, light rain" in shown
    assert "Tomorrow it will be [connection lost: discard that]" in shown
    assert "Tomorrow looks sunny in Paris, 21°C." in shown
    assert pieces.count("Tomorrow it will be") == 1
    assert len([piece for piece in pieces if piece and piece in answers[1]]) > 3  # chunks


def test_make_demo_runs_the_streaming_example_too() -> None:
    """``make demo`` shows streaming after the quickstart, offline."""
    makefile = (ROOT / "Makefile").read_text()
    assert "examples.streaming" in makefile.split("demo:", 1)[1].split("\n\n", 1)[0]


def test_tracing_prints_the_run_as_a_span_tree() -> None:
    """One trace, drawn as a tree: the retried attempt, the three concurrent tool calls
    (the sub-agent's turn under its call, the refused one with its halt), the answer;
    every span with its duration."""
    lines: list[str] = []
    answer = tracing.run_demo(lines.append)
    assert answer.startswith("Paris: 18°C and light rain.")
    names = [line[:44].rstrip() for line in lines]  # the tree, names padded to 44
    assert names == [
        "invoke_agent assistant",
        "├─ chat scripted",
        "├─ chat scripted",
        "├─ execute_tool weather",
        "├─ execute_tool researcher",
        "│  └─ invoke_agent researcher",
        "│     └─ chat scripted",
        "├─ execute_tool delete_notes",
        "└─ chat scripted",
    ]
    assert all(" ms" in line for line in lines)
    assert "raised TimeoutError; on_model_error retry by RetryTimeouts instance" in lines[1]
    assert "before_tool halt by Guard instance" in lines[7]
    assert lines[0].endswith("570→84 tokens")  # the run's usage, the sub-agent's included


def test_tracing_main_prints_the_tree_and_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """main() prints the question, the tree and the answer."""
    tracing.main()
    out = capsys.readouterr().out
    assert "user: What's the weather in Paris" in out
    assert "└─ invoke_agent researcher" in out
    assert "answer: Paris: 18°C" in out


def test_sessions_budget_holds_across_a_restart(tmp_path: Path) -> None:
    """The search count survives the restart: the third search runs, the fourth is refused;
    the file keeps every turn and the count, and a held session refuses a run."""
    demo = sessions.run_demo(tmp_path / "sessions.db")
    assert [result.output for result in demo.results] == [
        "3 results for 'sqlite wal'",
        "3 results for 'sqlite leases'",
        "3 results for 'busy timeout'",
        "search budget used up (3 per session)",
    ]
    assert demo.busy.holder == "run-elsewhere"
    assert (demo.messages, demo.state) == (16, {"searches": 3})
    with SQLiteSessionStore(tmp_path / "sessions.db") as store:
        assert store.load("ann", "research").state == {"searches": 3}


def test_sessions_main_prints_each_turn(capsys: pytest.CaptureFixture[str]) -> None:
    """The program prints the four turns, the refusal and what the file keeps."""
    sessions.main()
    out = capsys.readouterr().out
    assert "turn 4: search budget used up (3 per session)" in out
    assert "is busy: run 'run-elsewhere' holds its lease" in out
    assert "the file keeps 16 messages and the session state {'searches': 3}" in out


def test_approval_pauses_restarts_and_finishes_as_decided(tmp_path: Path) -> None:
    """Both deletions wait for a human; after the restart one is approved, one rejected:
    the approved file is gone, the rejected one stays and the model was told why."""
    demo = approval.run_demo(tmp_path)
    assert demo.paused.status == "paused"
    assert [request.reason for request in demo.pending] == ["delete notes.txt?", "delete old.log?"]
    assert (demo.finished.status, demo.finished.run_id) == ("completed", demo.paused.run_id)
    assert demo.finished.output == "Done: keep notes; deleted old.log."
    assert demo.left == ["keep.md", "notes.txt"]


def test_approval_main_prints_the_pause_and_the_end(capsys: pytest.CaptureFixture[str]) -> None:
    """The program prints the paused run, its two requests, and the finished run."""
    approval.main()
    out = capsys.readouterr().out
    assert ": paused\n  waiting: delete notes.txt?" in out
    assert "completed: Done: keep notes; deleted old.log." in out
    assert out.endswith("left in the folder: keep.md, notes.txt\n")


@pytest.mark.durable
@pytest.mark.subprocess
def test_durable_finishes_a_killed_run_without_repeating_finished_tools(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The first process dies in book_hotel; the second finishes the run: the flight and the
    car booked once, the hotel twice with one idempotency key."""
    durable.main()
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == [
        "process 1: killed inside book_hotel (exit code 1)",
        "process 2: Booked: flight to Lisbon; hotel in Lisbon; car in Lisbon. (exit code 0)",
    ]
    assert [line.split() for line in out[3:]] == [
        ["flight", "to", "Lisbon", "trip-1:3:call_1"],
        ["hotel", "in", "Lisbon", "trip-1:5:call_2"],
        ["hotel", "in", "Lisbon", "trip-1:5:call_2"],
        ["car", "in", "Lisbon", "trip-1:7:call_3"],
    ]


def test_quickstart_runs_against_an_anthropic_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """HOOKLINE_MODEL=anthropic:<name> makes an AnthropicModel that reads
    ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY: the same callbacks fire over the Messages
    API, the tool results go back as tool_result blocks, the redacted email never leaves."""
    from runner import AnthropicModel
    from tests.helpers import anthropic_server as api

    api.forget_environment(monkeypatch)
    with api.AnthropicServer() as server:
        server.script(
            api.message(api.tool_use("toolu_1", "add", {"a": 2, "b": 3})),
            api.message(api.text("It is 5.")),
            api.message(api.tool_use("toolu_2", "weather", {"city": "Paris"})),
            api.message(api.text("Rainy in Paris.")),
            api.message(api.text("Sent.")),
        )
        monkeypatch.setenv("HOOKLINE_MODEL", "anthropic:claude-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        model = quickstart.model_from_env()
        assert isinstance(model, AnthropicModel)
        try:
            demo = quickstart.run_demo(model)
        finally:
            model.close()
    assert [turn.result.output for turn in demo.turns] == [
        "It is 5.",
        "Rainy in Paris.",
        "I can't help with that.",
        "Sent.",
    ]
    assert server.unexpected == 0
    assert len(server.bodies) == 5
    assert all(body["model"] == "claude-test" for body in server.bodies)
    assert server.bodies[1]["messages"][-1] == {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}],
    }
    assert "jane.doe@example.com" not in json.dumps(server.bodies)
    assert "<email>" in json.dumps(server.bodies[-1])


def test_mcp_guard_pauses_destructive_calls_and_finishes_as_decided() -> None:
    """Both deletions on the MCP notes server wait for a human, the write does not; one
    deletion is rejected, the other approved, and the notes show it."""
    from examples import mcp_guard

    demo = mcp_guard.run_demo()
    assert demo.paused.status == "paused"
    assert [request.call.name for request in demo.paused.pending] == ["notes_delete"] * 2
    assert demo.finished.output == "Done: wrote summary; keep draft-1; deleted draft-2."
    assert sorted(demo.notes) == ["draft-1", "plan", "summary"]


def test_mcp_guard_is_in_make_demo() -> None:
    """`make demo` runs the MCP example too."""
    makefile = (ROOT / "Makefile").read_text()
    assert "examples.mcp_guard" in makefile.split("demo:", 1)[1].split("\n\n", 1)[0]
