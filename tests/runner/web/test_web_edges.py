"""Small edges of ``runner.web``: an AG-UI history placed on a thread another run just
wrote, a resume leaving an interrupt unanswered, an edit of a tool with no schema, the
live records kept, and a ``Host`` that is a bracket left open."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import pytest
from starlette.testclient import TestClient

from hooks import Cont, Edit, Message, PausableResult, Pause, ToolCall, ToolContext, ToolResult
from runner import (
    Agent,
    InMemorySessions,
    PendingRequest,
    Runner,
    ScriptedModel,
    Session,
    SessionStore,
)
from runner.web import WebApp, agui_app
from runner.web._agui_input import place_history
from runner.web._agui_pause import Refusal
from runner.web._decide import parse_decisions
from runner.web._live import LiveRuns
from tests.helpers.agui import post, resume_input, run_input
from tests.helpers.runs import calling
from tests.runner.web.conftest import TOKEN


class Stale:
    """A store whose ``load`` gives the session as it was before another run saved it."""

    def __init__(self, inner: InMemorySessions, before: Session) -> None:
        self.inner = inner
        self.before = before

    def load(self, user_id: str, session_id: str, /) -> Session:
        return self.before

    def save(
        self, user_id: str, session_id: str, messages: Sequence[Message], /, **options: Any
    ) -> int:
        return self.inner.save(user_id, session_id, messages, **options)


def test_a_history_placed_on_a_thread_another_run_just_wrote_is_a_409() -> None:
    """The client's history is not written over a thread another run saved since it was
    read: 409 naming the thread; the other run's messages stay."""
    inner = InMemorySessions()
    before = inner.load("user", "t1")
    inner.save("user", "t1", (Message("user", "mine"),), version=before.version)
    store = cast(SessionStore, Stale(inner, before))
    with pytest.raises(Refusal, match="thread 't1': ") as refused:
        place_history(store, "user", "t1", (Message("user", "theirs"),))
    assert refused.value.status == 409
    assert [m.content for m in inner.load("user", "t1").messages] == ["mine"]


class AskFirst:
    """Pauses every undecided call."""

    def before_tool(self, ctx: ToolContext, /) -> PausableResult[ToolContext, ToolResult]:
        """Pause an undecided call; let a decided one through."""
        return Pause("sure?") if ctx.decision is None else Cont(ctx)


def test_a_resume_leaving_an_interrupt_unanswered_is_refused_naming_it() -> None:
    """Two calls wait; a resume answering one is 422 naming the other; nothing ran."""
    ran: list[str] = []

    def delete_file(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return path

    calls = calling(
        ToolCall("c1", "delete_file", {"path": "a"}), ToolCall("c2", "delete_file", {"path": "b"})
    )
    agent = Agent(
        "files", ScriptedModel([calls, "done"]), tools=[delete_file], callbacks=[AskFirst()]
    )
    app = agui_app(Runner(agent))
    finished = post(app, run_input("clean")).last
    first, second = (interrupt["id"] for interrupt in finished["outcome"]["interrupts"])
    answer = post(app, resume_input([(first, {"decision": "approve"})]))
    assert answer.status == 422
    assert answer.error == f"resume: no answer for interrupt {second}"
    assert ran == []


def test_an_edit_of_a_tool_without_a_schema_takes_any_object() -> None:
    """A request whose tool has no known schema (an MCP server's) is edited to any
    object; its args are passed on as given."""
    request = PendingRequest("req_1", ToolCall("c1", "remote", {"n": 1}), "ok?", "a", "a")
    edited = {"n": "anything", "more": [1, 2]}
    decided = parse_decisions(
        {"decisions": {"req_1": {"kind": "edit", "args": edited}}}, (request,), {}
    )
    assert decided == {"req_1": Edit(edited)}


def test_the_live_runs_keep_the_newest_ended_and_every_running_one() -> None:
    """Past ``keep`` runs, the oldest ended ones go until ``keep`` are left; the newer
    ended ones and a run still going stay."""
    runs = LiveRuns(keep=2)
    for run_id in ("r1", "r2"):
        runs.start(run_id).finish({"kind": "finished"})
    runs.start("r3")
    assert (runs.get("r1"), runs.get("r2") is not None, runs.get("r3") is not None) == (
        None,
        True,
        True,
    )


@pytest.mark.parametrize("host", ["[::1", "[::1:80"])
def test_a_host_with_an_open_bracket_is_refused_as_it_is(app: WebApp, host: str) -> None:
    """A ``Host`` that opens a bracket and never closes it is no host served here: 421
    naming it whole."""
    with TestClient(app, base_url="http://127.0.0.1") as c:
        refused = c.get("/api/paused", headers={"Authorization": f"Bearer {TOKEN}", "Host": host})
    assert refused.status_code == 421
    assert refused.json()["error"] == f"host {host!r} is not served here"
