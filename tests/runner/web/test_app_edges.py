"""The inbox's endpoints at their edges: a damaged paused run, a paused agent the
runner lacks, a run that pauses again, a resume the runner refuses or that fails
before or after it started."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from starlette.testclient import TestClient

from examples.web_inbox import AskBeforeDeleting, JanitorModel, make_runner
from hooks import Approve, ModelRequest, ModelResponse, ToolCall
from runner import (
    Agent,
    InvalidDecisions,
    ModelResponseEvent,
    Runner,
    RunResult,
    RunStartedEvent,
    SessionStore,
    SQLiteSessionStore,
    StreamEvent,
)
from runner.web import WebApp, inbox_app
from tests.runner.web.conftest import TOKEN

BEARER = {"Authorization": f"Bearer {TOKEN}"}


def client(app: WebApp) -> TestClient:
    return TestClient(app, base_url="http://127.0.0.1", headers=BEARER)


def approve_all(paused: RunResult) -> dict[str, Any]:
    return {"decisions": {request.id: {"kind": "approve"} for request in paused.pending}}


def test_a_damaged_paused_run_is_a_500_naming_it(store: SQLiteSessionStore) -> None:
    """A paused state the store cannot read makes the inbox a 500 saying which run."""
    store.save_paused("r-bad", "ann", "s1", "{not json")
    with client(inbox_app(make_runner, store, token=TOKEN)) as c:
        listed = c.get("/api/paused")
    assert listed.status_code == 500
    assert "r-bad" in listed.json()["error"]


def test_a_run_paused_by_an_agent_this_runner_lacks_lists_no_chain_or_schema(
    store: SQLiteSessionStore, paused: RunResult
) -> None:
    """A request of an agent the serving runner does not have is listed without a
    before_tool chain or an argument schema (nothing to explain it with)."""

    def other(store: SessionStore) -> Runner:
        return Runner(Agent("someone", JanitorModel()), sessions=store)

    with client(inbox_app(other, store, token=TOKEN, capture=True)) as c:
        (run,) = c.get("/api/paused").json()["runs"]
    assert run["run_id"] == paused.run_id
    assert [(r["chain"], r["args_schema"]) for r in run["pending"]] == [([], None), ([], None)]


class AgainModel:
    """Asks to delete ``old.log``, then ``notes.txt``, then ``tmp.txt``, each once the
    one before answered, then ends."""

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The next step, from how many tool results the conversation holds."""
        done = [message for message in request.messages if message.role == "tool"]
        if len(done) == 0:
            return ModelResponse(tool_calls=(ToolCall("c1", "delete_file", {"path": "old.log"}),))
        if len(done) == 1:
            return ModelResponse(tool_calls=(ToolCall("c2", "delete_file", {"path": "notes.txt"}),))
        if len(done) == 2:
            return ModelResponse(tool_calls=(ToolCall("c3", "delete_file", {"path": "tmp.txt"}),))
        return ModelResponse("Done")


def again(store: SessionStore) -> Runner:
    """A janitor that pauses on each deletion in turn; it has a tool before delete_file."""

    def list_files() -> str:
        """List the folder."""
        return "old.log notes.txt"  # pragma: no cover -- never called

    def delete_file(path: str) -> str:
        """Delete one file."""
        return f"deleted {path}"

    agent = Agent("janitor", AgainModel(), tools=[list_files, delete_file])
    return Runner(agent, sessions=store, callbacks=[AskBeforeDeleting()])


def test_a_run_resumed_here_that_pauses_again_names_the_callback_that_paused_it(
    store: SQLiteSessionStore,
) -> None:
    """A run this server resumed and that paused again is listed with the callback that
    paused its new request (this server saw the hook decide), its tool's schema found
    past the agent's other tools; its records come from the live record."""
    with again(store) as runner:
        paused = runner.run("tidy", user_id="ann")
    assert paused.status == "paused"
    with client(inbox_app(again, store, token=TOKEN, capture=True)) as c:
        first = c.get("/api/paused").json()["runs"][0]["pending"][0]
        assert first["paused_by"] is None  # paused in another process: its hooks unseen
        decided = c.post(f"/api/runs/{paused.run_id}/decide", json=approve_all(paused))
        assert decided.status_code == 202, decided.text
        c.get(f"/api/runs/{paused.run_id}/events")  # to the run's end
        (run,) = c.get("/api/paused").json()["runs"]
        body = c.get(f"/api/runs/{paused.run_id}").json()
    (request,) = run["pending"]
    assert request["args"] == {"path": "notes.txt"}
    assert request["paused_by"] == "AskBeforeDeleting instance"
    assert request["args_schema"]["properties"] == {"path": {"type": "string"}}
    assert body["live"] is False
    assert body["records"][-1]["kind"] == "finished"
    assert body["records"][-1]["status"] == "paused"


def test_a_run_paused_again_elsewhere_after_this_server_resumed_it_names_no_pauser(
    store: SQLiteSessionStore,
) -> None:
    """This server's record of a run it resumed names who paused that resume's request,
    not a later one: a request the run paused on after another process resumed it is
    listed without ``paused_by``."""
    with again(store) as runner:
        paused = runner.run("tidy", user_id="ann")
    with client(inbox_app(again, store, token=TOKEN, capture=True)) as c:
        decided = c.post(f"/api/runs/{paused.run_id}/decide", json=approve_all(paused))
        assert decided.status_code == 202, decided.text
        c.get(f"/api/runs/{paused.run_id}/events")  # to the run's end: paused on c2
        with again(store) as elsewhere:
            state = elsewhere.paused(paused.run_id)
            assert state is not None
            (waiting,) = state.pending
            assert waiting.call.id == "c2"
            later = elsewhere.resume(state, {waiting.id: Approve()})
        assert later.status == "paused"
        (run,) = c.get("/api/paused").json()["runs"]
    (request,) = run["pending"]
    assert request["args"] == {"path": "tmp.txt"}
    assert request["paused_by"] is None


def refusing(error: Exception, *, after_start: bool) -> Any:
    """A ``Runner.resume_stream`` that raises ``error``, at once or after the run started."""

    async def resume_stream(
        self: Runner, state: Any, decisions: Any, **_: Any
    ) -> AsyncGenerator[StreamEvent, None]:
        if after_start:
            yield RunStartedEvent(run_id=state.run_id, session_id="s", agent="janitor", time=0.0)
            response = ModelResponse("thinking")
            yield ModelResponseEvent(agent="janitor", branch="janitor", time=0.0, response=response)
        raise error

    return resume_stream


@pytest.mark.parametrize(
    "case",
    [
        (InvalidDecisions("r", misfit={"req_1": "not allowed"}), 422, "not allowed"),
        (OSError("disk full"), 500, "the resume failed: OSError"),
    ],
)
def test_a_resume_the_runner_refuses_before_it_runs_is_answered_with_why(
    store: SQLiteSessionStore,
    paused: RunResult,
    monkeypatch: pytest.MonkeyPatch,
    case: tuple[Exception, int, str],
) -> None:
    """Decisions the runner refuses are a 422; any other failure before the run started
    a 500 naming its type (not its message); the run still waits."""
    error, status, said = case
    monkeypatch.setattr(Runner, "resume_stream", refusing(error, after_start=False))
    with client(inbox_app(make_runner, store, token=TOKEN)) as c:
        answer = c.post(f"/api/runs/{paused.run_id}/decide", json=approve_all(paused))
        listed = c.get("/api/paused").json()["runs"]
    assert answer.status_code == status
    assert said in answer.json()["error"]
    assert "disk full" not in answer.json()["error"]
    assert [run["run_id"] for run in listed] == [paused.run_id]


def test_a_resume_that_fails_after_it_started_ends_its_records_failed(
    store: SQLiteSessionStore, paused: RunResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed run failing once it ran is a 202 whose records end ``failed``, naming
    the error's type."""
    monkeypatch.setattr(Runner, "resume_stream", refusing(OSError("x"), after_start=True))
    with client(inbox_app(make_runner, store, token=TOKEN)) as c:
        answer = c.post(f"/api/runs/{paused.run_id}/decide", json=approve_all(paused))
        c.get(f"/api/runs/{paused.run_id}/events")
        body = c.get(f"/api/runs/{paused.run_id}").json()
    assert answer.status_code == 202
    assert body["live"] is False
    assert [r["kind"] for r in body["records"]] == ["started", "model_response", "failed"]
    assert body["records"][-1]["error"] == "OSError"
