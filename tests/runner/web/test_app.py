"""The inbox's endpoints: what it lists, what a decision does, who wins, what is hidden."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.testclient import TestClient

from examples.web_inbox import make_runner, pause_one
from hooks import Approve, Reject
from runner import InMemorySessions, RunResult, SQLiteSessionStore
from runner.web import WebApp, inbox_app
from tests.runner.web.conftest import TOKEN, Store02

BASE = "http://127.0.0.1"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def client(app: WebApp) -> TestClient:
    return TestClient(app, base_url=BASE, headers=BEARER)


def both(paused: RunResult, second: str = "reject") -> dict[str, Any]:
    first, other = paused.pending
    decision = (
        {"kind": "reject", "message": "keep notes"} if second == "reject" else {"kind": second}
    )
    return {"decisions": {first.id: {"kind": "approve"}, other.id: decision}}


def records(c: TestClient | httpx.Client, run_id: str) -> list[dict[str, Any]]:
    """The run's records as its event stream sends them, to its end."""
    text = c.get(f"/api/runs/{run_id}/events").text
    sent = [
        json.loads(line.removeprefix("data:"))
        for line in text.splitlines()
        if line.startswith("data:")
    ]
    assert sent[-1] == {"kind": "end"}
    return sent[:-1]


def test_the_inbox_lists_each_request_with_reason_hook_and_call(
    app: WebApp, paused: RunResult
) -> None:
    """Every request: its reason, the before_tool chain that paused it, the call, the
    decisions allowed and the tool's argument schema for an edit."""
    with client(app) as c:
        body = c.get("/api/paused").json()
    (run,) = body["runs"]
    assert run["run_id"] == paused.run_id
    assert run["agent"] == "janitor"
    assert [r["reason"] for r in run["pending"]] == ["delete old.log?", "delete notes.txt?"]
    first = run["pending"][0]
    assert first["tool"] == "delete_file"
    assert first["args"] == {"path": "old.log"}
    assert first["chain"] == ["AskBeforeDeleting instance"]
    assert first["allowed"] == ["approve", "edit", "reject"]
    assert first["args_schema"]["properties"] == {"path": {"type": "string"}}


def test_approve_and_reject_resume_the_run_to_its_end(app: WebApp, paused: RunResult) -> None:
    """One approval and one rejection resume the run in the server; its records end with
    the finished run, the hook decisions of the resume among them."""
    with client(app) as c:
        decided = c.post(f"/api/runs/{paused.run_id}/decide", json=both(paused))
        assert decided.status_code == 202, decided.text
        assert decided.json()["trace"] == f"/trace/{paused.run_id}"
        seen = records(c, paused.run_id)
        assert c.get("/api/paused").json()["runs"] == []
    finished = seen[-1]
    assert finished["kind"] == "finished"
    assert finished["status"] == "completed"
    assert finished["output"] == "Done: deleted old.log; keep notes"
    hooks = [(r["point"], r["call_id"]) for r in seen if r["kind"] == "hook"]
    assert ("before_tool", "c1") in hooks
    assert ("after_agent", None) in hooks
    assert {r["kind"] for r in seen} >= {"tool_attempt", "tool_result", "model_response"}


def test_an_edit_runs_the_call_with_the_new_arguments(app: WebApp, paused: RunResult) -> None:
    """An edit's arguments, checked against the tool's schema, are what the call runs with."""
    first, other = paused.pending
    body = {
        "decisions": {
            first.id: {"kind": "edit", "args": {"path": "other.log"}},
            other.id: {"kind": "approve"},
        }
    }
    with client(app) as c:
        assert c.post(f"/api/runs/{paused.run_id}/decide", json=body).status_code == 202
        finished = records(c, paused.run_id)[-1]
    assert finished["output"] == "Done: deleted other.log; deleted notes.txt"


@pytest.mark.parametrize(
    ("decisions", "problem"),
    [
        ("not an object", "must be a JSON object"),
        ({"req_x": {"kind": "approve"}}, "no pending request has the id 'req_x'"),
        ({0: {"kind": "approve"}}, "missing"),
        ({1: {"kind": "respond", "value": {}}}, "'respond' is not one of"),
        ({1: {"kind": "edit", "args": {"path": 5}}}, "path: 5 is not of type 'string'"),
        ({1: {"kind": "edit", "args": {"path": "a", "x": 1}}}, "Additional properties"),
        ({1: {"kind": "edit", "args": ["a"]}}, "an edit's args are a JSON object"),
        ({1: {"kind": "reject", "message": 7}}, "a rejection's message is text"),
        ({1: {"kind": "reject", "message": "x" * 5000}}, "at most 4000"),
        ({1: "approve"}, 'an object with a "kind"'),
    ],
)
def test_a_decision_that_does_not_fit_is_a_422(
    app: WebApp, paused: RunResult, decisions: Any, problem: str
) -> None:
    """Hostile or mistaken decisions are refused before anything resumes, naming why."""
    first, other = paused.pending
    ids = {0: first.id, 1: other.id}
    if isinstance(decisions, dict):  # numbers stand for the requests' ids; 0 left out
        decisions = {ids.get(key, key): value for key, value in decisions.items()}
        if 0 not in ids or first.id not in decisions:
            decisions.setdefault(first.id, {"kind": "approve"}) if problem != "missing" else None
    with client(app) as c:
        refused = c.post(f"/api/runs/{paused.run_id}/decide", json={"decisions": decisions})
        assert refused.status_code == 422
        assert problem in refused.json()["error"]
        assert len(c.get("/api/paused").json()["runs"]) == 1  # still waiting


def test_a_body_that_is_no_json_or_too_big_is_refused(app: WebApp, paused: RunResult) -> None:
    """Malformed and oversized bodies are refused with 400 and 413."""
    path = f"/api/runs/{paused.run_id}/decide"
    with client(app) as c:
        assert c.post(path, content=b"{nope").status_code == 400
        assert c.post(path, content=b"[" * 100_000).status_code == 400
        assert c.post(path, content=b" " * (1024 * 1024 + 1)).status_code == 413


def test_a_run_decided_already_is_a_409(app: WebApp, paused: RunResult) -> None:
    """Deciding a run that is not waiting any more says it was decided already."""
    with client(app) as c:
        assert c.post(f"/api/runs/{paused.run_id}/decide", json=both(paused)).status_code == 202
        records(c, paused.run_id)
        again = c.post(f"/api/runs/{paused.run_id}/decide", json=both(paused))
        unknown = c.post("/api/runs/nope/decide", json=both(paused))
    assert again.status_code == 409
    assert "decided already" in again.json()["error"]
    assert unknown.status_code == 409


async def _race(apps: list[WebApp], paused: RunResult) -> list[int]:
    async def decide(app: WebApp) -> int:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url=BASE, headers=BEARER) as c:
            response = await c.post(f"/api/runs/{paused.run_id}/decide", json=both(paused))
            if response.status_code == 202:
                await c.get(f"/api/runs/{paused.run_id}/events")  # to the run's end
            return response.status_code

    return sorted(await asyncio.gather(*(decide(app) for app in apps)))


def test_two_deciders_on_one_server_one_wins(app: WebApp, paused: RunResult) -> None:
    """Two people deciding the same run at once on one server: one 202, one 409."""
    assert asyncio.run(_race([app, app], paused)) == [202, 409]


def test_two_servers_on_one_store_one_wins(store: SQLiteSessionStore, paused: RunResult) -> None:
    """Two servers (two stores on one file, as two processes have) deciding at once: the
    session's lease and the stored state let exactly one resume."""
    with SQLiteSessionStore(store.path) as other:
        apps = [
            inbox_app(make_runner, store, token=TOKEN),
            inbox_app(make_runner, other, token=TOKEN),
        ]
        assert asyncio.run(_race(apps, paused)) == [202, 409]


SECRET = "s3cr3t-path"


def test_no_content_is_served_when_capture_is_off(
    store: SQLiteSessionStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Capture off (the telemetry default): no argument, message or result reaches a
    page -- neither in the inbox nor in a resumed run's records -- unless asked."""
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    paused = pause_one(store)
    first, other = paused.pending
    edit = {"kind": "edit", "args": {"path": SECRET}}
    body = {"decisions": {first.id: edit, other.id: {"kind": "approve"}}}
    with client(inbox_app(make_runner, store, token=TOKEN)) as c:
        listed = c.get("/api/paused").text
        assert '"args":null' in listed
        assert 'old.log"}' not in listed
        assert c.post(f"/api/runs/{paused.run_id}/decide", json=body).status_code == 202
        seen = json.dumps(records(c, paused.run_id))
    assert SECRET not in seen
    assert "deleted" not in seen
    assert '"status": "completed"' in seen


def test_capture_follows_the_telemetry_setting(
    store: SQLiteSessionStore, paused: RunResult, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``capture=None`` reads OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, as
    telemetry does; ``capture=False`` wins over it."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    with client(inbox_app(make_runner, store, token=TOKEN)) as c:
        assert c.get("/api/paused").json()["runs"][0]["pending"][0]["args"] == {"path": "old.log"}
    with client(inbox_app(make_runner, store, token=TOKEN, capture=False)) as c:
        assert c.get("/api/paused").json()["runs"][0]["pending"][0]["args"] is None


def test_a_store_that_cannot_list_is_refused_when_the_app_is_made(tmp_path: Path) -> None:
    """A store of 0.2's protocol (no list_paused, no records) is refused by ``inbox_app``
    with a TypeError naming what it lacks; runs on it go on as before."""
    with Store02(tmp_path / "s.db") as old, pytest.raises(TypeError, match="list_paused"):
        inbox_app(make_runner, old, token=TOKEN)


def test_the_trace_of_a_run_another_runner_finished_comes_from_the_store(
    app: WebApp, store: SQLiteSessionStore, paused: RunResult
) -> None:
    """A run resumed elsewhere (not by this server) is drawn from the store's records:
    its events, the resumed part's included, to the finished answer."""
    first, other = paused.pending
    with make_runner(store) as runner:
        state = runner.paused(paused.run_id)
        assert state is not None
        runner.resume(state, {first.id: Approve(), other.id: Reject("keep notes")})
    with client(app) as c:
        body = c.get(f"/api/runs/{paused.run_id}").json()
        streamed = records(c, paused.run_id)
    assert body["live"] is False
    assert [r["kind"] for r in body["records"]] == [r["kind"] for r in streamed]
    kinds = [r["kind"] for r in streamed]
    assert kinds.count("pause") == 2
    assert "tool_result" in kinds
    assert streamed[-1]["kind"] == "model_response"
    assert streamed[-1]["text"] == "Done: deleted old.log; keep notes"


def test_damaged_records_are_named_not_drawn(app: WebApp, store: SQLiteSessionStore) -> None:
    """Records that are no run records give a 500 naming the run and the line."""

    class Damaged:
        def jsonl(self) -> str:
            return '{"$t": "Nope"}\n'

    store.save_records("r1", "u", "s", Damaged())
    with client(app) as c:
        for path in ("/api/runs/r1", "/api/runs/r1/events"):
            damaged = c.get(path)
            assert damaged.status_code == 500
            assert "line 1" in damaged.json()["error"]


def test_records_of_an_unknown_run_are_a_404(app: WebApp) -> None:
    """A run the server has no records of is a 404, on both the JSON and the SSE route."""
    with client(app) as c:
        assert c.get("/api/runs/nope").status_code == 404
        assert c.get("/api/runs/nope/events").status_code == 404


def test_the_agui_mount_point_is_there(store: SQLiteSessionStore) -> None:
    """``/agui`` answers 404 until an AG-UI app is mounted, then that app answers."""

    async def agui(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"agui"})

    with client(inbox_app(make_runner, store, token=TOKEN)) as c:
        assert c.get("/agui/").status_code == 404
    with client(inbox_app(make_runner, store, token=TOKEN, agui=agui)) as c:
        assert c.get("/agui/").text == "agui"


def test_runner_must_be_a_runner_or_make_one(store: SQLiteSessionStore) -> None:
    """A source that makes no Runner is refused when the app is made."""
    with pytest.raises(TypeError, match="must be a Runner"):
        inbox_app(lambda store: InMemorySessions(), store)  # type: ignore[arg-type,return-value]


def test_a_resumed_run_s_records_arrive_live_while_it_runs(
    store: SQLiteSessionStore, paused: RunResult
) -> None:
    """The event stream sends the approved call's before_tool decision while its tool
    still runs (the tool waits until the watcher has seen it), then the rest to the
    run's end. (A batch's call events come when the batch ends: the streamed run
    records them so; hook decisions come as each hook returns.)"""
    import threading

    from examples.web_inbox import AskBeforeDeleting, JanitorModel
    from runner import Agent, Runner, SessionStore

    seen_attempt = threading.Event()
    waited: list[bool] = []

    def delete_file(path: str) -> str:
        """Delete one file, once the watcher saw this call start."""
        waited.append(seen_attempt.wait(timeout=30))  # False: nobody saw it live
        return f"deleted {path}"

    def make(store: SessionStore) -> Runner:
        agent = Agent("janitor", JanitorModel(), tools=[delete_file])
        return Runner(agent, sessions=store, callbacks=[AskBeforeDeleting()])

    kinds: list[str] = []
    with client(inbox_app(make, store, token=TOKEN, capture=True)) as c:
        assert c.post(f"/api/runs/{paused.run_id}/decide", json=both(paused)).status_code == 202
        with c.stream("GET", f"/api/runs/{paused.run_id}/events") as stream:
            for line in stream.iter_lines():
                if not line.startswith("data:"):
                    continue
                record = json.loads(line.removeprefix("data:"))
                kinds.append(record["kind"])
                if (record.get("point"), record.get("call_id")) == ("before_tool", "c1"):
                    assert "tool_result" not in kinds  # the tool has not answered yet
                    seen_attempt.set()
    assert kinds[-2:] == ["finished", "end"]
    assert kinds.index("hook") < kinds.index("tool_result")
    assert waited == [True]  # the approved call went on only once its start was seen


def test_a_call_paused_in_a_sub_agent_is_listed_with_that_agent_s_chain_and_schema(
    store: SQLiteSessionStore,
) -> None:
    """A request paused inside a sub-agent names the sub-agent's before_tool chain and
    its tool's schema, not the root agent's; an edit is checked against that schema."""
    from examples.web_inbox import AskBeforeDeleting
    from runner import Agent, ModelResponse, Runner, ScriptedModel, SessionStore, ToolCall

    def delete_file(path: str, force: bool) -> str:
        """Delete a file."""
        return f"deleted {path}"

    def make(store: SessionStore) -> Runner:
        deletes = ModelResponse(
            tool_calls=(ToolCall("h1", "delete_file", {"path": "a", "force": True}),)
        )
        helper = Agent(
            "helper",
            ScriptedModel([deletes, ModelResponse("gone")]),
            tools=[delete_file],
            callbacks=[AskBeforeDeleting()],
        )
        asks = ModelResponse(tool_calls=(ToolCall("k1", "helper", {"request": "tidy"}),))
        root = Agent("root", ScriptedModel([asks, ModelResponse("done")]), sub_agents=[helper])
        return Runner(root, sessions=store)

    with make(store) as runner:
        paused = runner.run("tidy up")
    with client(inbox_app(make, store, token=TOKEN, capture=True)) as c:
        (request,) = c.get("/api/paused").json()["runs"][0]["pending"]
        edit = {"kind": "edit", "args": {"path": "b", "force": "yes"}}
        refused = c.post(
            f"/api/runs/{paused.run_id}/decide", json={"decisions": {request["id"]: edit}}
        )
    assert (request["agent"], request["branch"]) == ("helper", "root/helper")
    assert request["chain"] == ["AskBeforeDeleting instance"]
    assert request["args_schema"]["required"] == ["path", "force"]
    assert refused.status_code == 422
    assert "force: 'yes' is not of type 'boolean'" in refused.json()["error"]


def test_a_decider_who_read_the_run_before_another_finished_it_gets_a_409(
    store: SQLiteSessionStore, paused: RunResult, tmp_path: Path
) -> None:
    """A server that read the paused state just before another process resumed the run to
    its end: its resume takes the free lease, then finds the session moved on -- a 409
    saying it was decided already, never a 202 for a run that does not go on."""
    from runner import PausedRun

    class ReadTooEarly(Store02):
        """A second process's store that still sees the paused state it read first."""

        def __init__(self, path: str | Path, stale: str) -> None:
            super().__init__(path)
            self.stale = stale

        def load_paused(self, run_id: str, /) -> str | None:
            return self.inner.load_paused(run_id) or self.stale

        def list_paused(self, *, limit: int | None = None) -> tuple[PausedRun, ...]:
            return self.inner.list_paused(limit=limit)

        def save_records(self, run_id: str, user_id: str, session_id: str, records: Any, /) -> None:
            self.inner.save_records(run_id, user_id, session_id, records)

        def load_records(self, run_id: str, /) -> str | None:
            return self.inner.load_records(run_id)

    stale = store.load_paused(paused.run_id)
    assert stale is not None
    with client(app_of(store)) as first:
        assert first.post(f"/api/runs/{paused.run_id}/decide", json=both(paused)).status_code == 202
        records(first, paused.run_id)  # to its end
    with ReadTooEarly(store.path, stale) as late, client(app_of(late)) as second:
        refused = second.post(f"/api/runs/{paused.run_id}/decide", json=both(paused))
    assert refused.status_code == 409
    assert "decided already" in refused.json()["error"]


def app_of(store: Any) -> WebApp:
    return inbox_app(make_runner, store, token=TOKEN)
