"""Ready-made policies: ``LoopGuard``, ``TruncateToolResult``, ``HashChainAudit``.

Each is a callback like any other: put in a run's callbacks, it acts through the same
hook points, in sync and async runs.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from returns.result import Failure, Success

from hooks import (
    Approve,
    BeforeResult,
    Cont,
    Halt,
    HookEvent,
    Invocation,
    ModelContext,
    ModelRequest,
    ToolContext,
    ToolResult,
)
from runner import (
    Agent,
    AuditBroken,
    AuditHead,
    HashChainAudit,
    LoopGuard,
    MCPTools,
    Message,
    Redact,
    RequireApproval,
    Runner,
    ScriptedModel,
    ToolAnnotations,
    ToolCall,
    ToolInfo,
    ToolResultEvent,
    TruncateToolResult,
    as_tool,
)
from tests.helpers.mcp_servers import notes_server
from tests.helpers.runs import Mode, calling, drive, events_of


def lookup(q: str) -> str:
    """Look something up."""
    return f"nothing on {q}"


def results(
    mode: Mode, *calls: ToolCall, callbacks: list[object], tool: object = lookup
) -> list[ToolResult]:
    """The results of ``calls``, one model turn each, then an answer."""
    model = ScriptedModel([*(calling(call) for call in calls), "done"])
    with Runner(Agent("a", model, tools=[tool])) as runner:
        result = drive(runner, mode, "go", callbacks=callbacks)
    return [event.result for event in events_of(result, ToolResultEvent)]


def test_a_loop_guard_halts_the_nth_identical_call(mode: Mode) -> None:
    """Two identical calls run; the third is refused with a message; other arguments run."""
    same = ToolCall("c", "lookup", {"q": "x"})  # ids may repeat across turns
    got = results(
        mode,
        same,
        ToolCall("d", "lookup", {"q": "y"}),
        same,
        same,
        callbacks=[LoopGuard(3)],
    )
    assert [result.content for result in got[:3]] == [
        "nothing on x",
        "nothing on y",
        "nothing on x",
    ]
    assert got[3].is_error
    assert got[3].content.startswith("lookup was called 3 times with the same arguments")


def test_a_loop_guard_forgets_calls_outside_its_window(mode: Mode) -> None:
    """With a window of 3, a call repeated after two others counts once again."""
    same = ToolCall("c", "lookup", {"q": "x"})
    other = [ToolCall(f"o{i}", "lookup", {"q": str(i)}) for i in range(2)]
    got = results(mode, same, *other, same, callbacks=[LoopGuard(2, window=3)])
    assert not any(result.is_error for result in got)
    got = results(mode, same, other[0], same, callbacks=[LoopGuard(2, window=3)])
    assert got[-1].is_error


def test_argument_order_does_not_hide_a_loop(mode: Mode) -> None:
    """The arguments are compared as canonical JSON: key order does not matter."""

    def two(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    got = results(
        mode,
        ToolCall("c1", "two", {"a": 1, "b": 2}),
        ToolCall("c2", "two", {"b": 2, "a": 1}),
        callbacks=[LoopGuard(2)],
        tool=two,
    )
    assert [result.is_error for result in got] == [False, True]


@pytest.mark.parametrize(
    ("n", "window", "words"),
    [(1, 20, "n must be an int >= 2"), (3, 2, "window must be an int >= 3"), (2.0, 5, "n must")],
)
def test_a_loop_guard_needs_a_sensible_n_and_window(n: int, window: int, words: str) -> None:
    """A guard that would refuse the first call, or whose window cannot hold n calls."""
    with pytest.raises(ValueError, match=words):
        LoopGuard(n, window=window)


def test_a_long_result_keeps_its_head_and_tail_and_says_what_was_cut(mode: Mode) -> None:
    """The model reads at most ``max_chars``: the start, a note, the end."""

    def log() -> str:
        """Read the log."""
        return "START" + "x" * 5_000 + "END"

    [result] = results(
        mode, ToolCall("c", "log", {}), callbacks=[TruncateToolResult(1_000)], tool=log
    )
    assert len(result.content) <= 1_000
    assert result.content.startswith("STARTx")
    assert result.content.endswith("xEND")
    assert "characters cut of 5008 ...]" in result.content


@settings(max_examples=200, deadline=None, database=None)
@given(text=st.text(max_size=3_000), limit=st.integers(min_value=200, max_value=2_000))
def test_a_cut_result_never_exceeds_the_limit_and_a_short_one_is_untouched(
    text: str, limit: int
) -> None:
    """Whatever the text and the limit."""
    truncate = TruncateToolResult(limit)
    if len(text) <= limit:
        return
    cut = truncate.cut(text)
    assert len(cut) <= limit
    head, _, tail = cut.partition("\n[... ")
    assert text.startswith(head)
    assert text.endswith(tail.partition(" ...]\n")[2])


def test_truncation_passes_short_results_and_failures() -> None:
    """A short result and a failure pass as they are."""
    truncate = TruncateToolResult(200)
    ok = Success(ToolResult("short"))
    assert truncate.after_tool(ok, None) is ok  # type: ignore[arg-type]
    failed: Failure[Exception] = Failure(ValueError("no"))
    assert truncate.after_tool(failed, None) is failed  # type: ignore[arg-type]


class Refuse:
    """Halts every tool call."""

    def before_tool(self, ctx: ToolContext) -> BeforeResult[ToolContext, ToolResult]:
        """Refuse."""
        return Halt(ToolResult("refused", is_error=True))


def test_the_audit_records_every_decision_even_of_a_halted_call(mode: Mode, tmp_path: Path) -> None:
    """One line per dispatch, chained; the halt names the callback that decided it."""
    path = tmp_path / "audit.jsonl"
    audit = HashChainAudit(path)
    results(mode, ToolCall("c", "lookup", {"q": "x"}), callbacks=[audit, Refuse()])
    lines = path.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    assert [record["seq"] for record in records] == list(range(1, len(records) + 1))
    halted = [r["event"] for r in records if r["event"]["point"] == "before_tool"]
    assert halted == [
        {
            "point": "before_tool",
            "agent": "a",
            "branch": "a",
            "outcome": "halt",
            "callback": "Refuse instance",
            "tool": "lookup",
            "call_id": "c",
            "attempt": 1,
            "time": halted[0]["time"],
            "run_id": halted[0]["run_id"],
            "error": None,
        }
    ]
    assert HashChainAudit.verify(path) == audit.head == AuditHead(len(records), records[-1]["hash"])


def event(number: int) -> HookEvent:
    """A made-up dispatch."""
    return HookEvent("before_tool", "a", "a", "cont", 0.0, tool=f"t{number}", time=float(number))


def chain(tmp_path: Path, count: int) -> tuple[Path, list[str]]:
    """An audit file of ``count`` records and its lines."""
    path = tmp_path / f"chain-{count}.jsonl"
    path.unlink(missing_ok=True)
    audit = HashChainAudit(path)
    for number in range(count):
        audit.on_event(event(number))
    return path, path.read_text(encoding="utf-8").splitlines(keepends=True)


@settings(max_examples=120, deadline=None, database=None)
@given(data=st.data())
def test_verify_catches_every_single_line_edit_drop_swap_and_insertion(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    """Any one change to the lines of a chain is found, at or before the changed line."""
    tmp_path = tmp_path_factory.mktemp("audit")
    count = data.draw(st.integers(min_value=2, max_value=8))
    path, lines = chain(tmp_path, count)
    index = data.draw(st.integers(min_value=0, max_value=count - 1))
    change = data.draw(st.sampled_from(["edit", "drop", "swap", "insert"]))
    changed = list(lines)
    if change == "edit":
        line = changed[index]
        at = data.draw(st.integers(min_value=0, max_value=len(line) - 2))
        char = data.draw(st.characters(codec="utf-8").filter(lambda c: c != line[at]))
        changed[index] = line[:at] + char + line[at + 1 :]
    elif change == "drop":
        if index == count - 1:
            index -= 1  # dropping the last line is a cut: the kept head catches it (below)
        del changed[index]
    elif change == "swap":
        other = (index + 1) % count
        changed[index], changed[other] = changed[other], changed[index]
        index = min(index, other)
    else:
        changed.insert(index, lines[index - 1] if index else lines[1])
    path.write_text("".join(changed), encoding="utf-8")
    with pytest.raises(AuditBroken) as broken:
        HashChainAudit.verify(path)
    assert broken.value.line <= index + 1


def test_a_file_cut_after_a_good_line_is_caught_by_the_kept_head(tmp_path: Path) -> None:
    """Dropping the last records leaves a good chain: only the head kept elsewhere says so."""
    path, lines = chain(tmp_path, 5)
    head = HashChainAudit.verify(path)
    path.write_text("".join(lines[:3]), encoding="utf-8")
    assert HashChainAudit.verify(path).records == 3
    with pytest.raises(AuditBroken, match="ends after 3 records"):
        HashChainAudit.verify(path, head=head)


def test_an_audit_goes_on_after_the_chain_it_finds_and_refuses_a_broken_one(
    tmp_path: Path,
) -> None:
    """A new audit on an intact file continues its chain; on a broken one it refuses."""
    path, lines = chain(tmp_path, 3)
    again = HashChainAudit(path)
    again.on_event(event(9))
    assert HashChainAudit.verify(path).records == 4
    path.write_text("".join([lines[1], lines[0]]), encoding="utf-8")
    with pytest.raises(AuditBroken, match="line 1"):
        HashChainAudit(path).on_event(event(10))


def test_a_failed_write_is_said_in_the_chain_by_the_next_record(tmp_path: Path) -> None:
    """A record that could not be written (the path is a directory for a while) is
    counted; the next record written says so, in the chain."""
    blocked = tmp_path / "dir-as-file"
    blocked.mkdir()
    broken_audit = HashChainAudit(blocked)
    with pytest.raises(IsADirectoryError):
        broken_audit.on_event(event(1))
    blocked.rmdir()
    broken_audit.on_event(event(2))
    records = [json.loads(line) for line in blocked.read_text(encoding="utf-8").splitlines()]
    assert [record["event"].get("lost") for record in records] == [1, None]
    assert HashChainAudit.verify(blocked).records == 2


def test_policies_show_what_they_are_and_refuse_bad_settings(tmp_path: Path) -> None:
    """Each repr says the policy and its settings; bad settings are refused when made."""
    assert repr(LoopGuard(4, window=9)) == "LoopGuard(4, window=9)"
    assert repr(TruncateToolResult(500)) == "TruncateToolResult(500)"
    assert repr(HashChainAudit(tmp_path / "a.jsonl")).startswith("HashChainAudit('")
    with pytest.raises(TypeError, match="LoopGuard's key must be a non-empty str"):
        LoopGuard(3, key="")
    with pytest.raises(ValueError, match="max_chars must be an int >= 200"):
        TruncateToolResult(10)


def test_a_loop_guard_compares_arguments_json_cannot_sort(mode: Mode) -> None:
    """Arguments whose keys do not sort (a hook put them there) are compared by repr."""

    class Odd:
        name = "odd"

        def run(self, args: Mapping[str, Any], /) -> str:
            return "ok"

    guard = LoopGuard(2)
    model = ScriptedModel([calling(ToolCall("c", "odd", {})), "done"])
    with Runner(Agent("a", model, tools=[Odd()])) as runner:

        class Unsortable:
            def before_tool(self, ctx: ToolContext) -> BeforeResult[ToolContext, ToolResult]:
                odd: Any = {1: "a", "b": 2}  # keys a JSON encoder cannot sort
                call = replace(ctx.call, args=odd)
                return Cont(replace(ctx, call=call))

        result = drive(runner, mode, "go", callbacks=[Unsortable(), guard])
    assert [e.result.content for e in events_of(result, ToolResultEvent)] == ["ok"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"seq": 1}', "the line is not ended"),
        ("not json\n", "not JSON"),
        ("[1, 2]\n", "not a record of seq, prev, event and hash"),
        ('{"seq": 1}\n', "not a record of seq, prev, event and hash"),
    ],
)
def test_lines_that_are_no_records_are_named(tmp_path: Path, text: str, reason: str) -> None:
    """A cut write, a line that is not JSON or not a record: broken at line 1."""
    path = tmp_path / "audit.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(AuditBroken, match=f"line 1: {reason}"):
        HashChainAudit.verify(path)


def test_an_audit_can_sync_each_record_to_disk(tmp_path: Path) -> None:
    """``fsync=True`` writes the same chain."""
    path = tmp_path / "audit.jsonl"
    audit = HashChainAudit(path, fsync=True)
    audit.on_event(event(1))
    assert HashChainAudit.verify(path) == audit.head


KEY_PATTERN = r"sk-[A-Za-z0-9]{8,}"


def test_redact_hides_secrets_from_the_model_and_gives_them_to_the_tool(mode: Mode) -> None:
    """The user's key never reaches the model, which reads a placeholder; the model
    echoes the placeholder in a tool call and the tool gets the real key; the key the
    tool's result holds is hidden from the next request too."""
    got: list[str] = []

    def login(key: str) -> str:
        """Log in."""
        got.append(key)
        return f"logged in with {key}"

    model = ScriptedModel([calling(ToolCall("c1", "login", {"key": "[secret-1]"})), "You are in."])
    with Runner(Agent("a", model, tools=[login])) as runner:
        result = drive(runner, mode, "my key is sk-abcdef123456", callbacks=[Redact(KEY_PATTERN)])
    assert result.output == "You are in."
    assert got == ["sk-abcdef123456"]
    sent = json.dumps([[m.content for m in r.messages] for r in model.requests])
    assert "sk-abcdef123456" not in sent
    assert model.requests[0].messages[-1].content == "my key is [secret-1]"
    assert model.requests[1].messages[-1].content == "logged in with [secret-1]"


def test_redact_keeps_one_placeholder_per_secret_across_turns(mode: Mode) -> None:
    """The table is session-scoped: the same secret in a later run of the session gets
    the same placeholder, a new one the next number; the session keeps the user's text."""
    model = ScriptedModel(default="ok")
    redact = Redact(KEY_PATTERN)
    with Runner(Agent("a", model)) as runner:
        first = drive(runner, mode, "use sk-aaaaaaaaaa", callbacks=[redact])
        drive(
            runner,
            mode,
            "not sk-bbbbbbbbbb but sk-aaaaaaaaaa",
            session_id=first.session_id,
            callbacks=[redact],
        )
        session = runner.sessions.load("user", first.session_id)
    last = model.requests[-1].messages
    assert [m.content for m in last] == [
        "use [secret-1]",
        "ok",
        "not [secret-2] but [secret-1]",
    ]
    assert session.messages[0].content == "use sk-aaaaaaaaaa"


def test_redact_hides_secrets_in_tool_call_arguments_the_history_holds(mode: Mode) -> None:
    """An earlier assistant turn whose call carried a secret (a hook put it there) is
    sent with the placeholder; a request with nothing to hide is passed as it came."""
    redact = Redact(KEY_PATTERN)
    calls = (ToolCall("c1", "lookup", {"q": ["sk-cccccccccc", 1]}),)
    history = (
        Message("user", "hi"),
        Message("assistant", "", tool_calls=calls),
        Message("tool", "ok", tool_call_id="c1"),
    )
    ctx = ModelContext(Invocation("r", "a", "a"), ModelRequest(history))
    hidden = redact.before_model(ctx).ctx.request.messages[1].tool_calls[0].args
    assert hidden == {"q": ["[secret-1]", 1]}
    plain = ModelContext(Invocation("r", "a", "a"), ModelRequest((Message("user", "hi"),)))
    assert redact.before_model(plain).ctx is plain


@pytest.mark.parametrize(
    ("patterns", "error", "words"),
    [
        ((), ValueError, "at least one pattern"),
        (("a*",), ValueError, "matches the empty string"),
        ((3,), TypeError, "str regexes or re.Pattern"),
    ],
)
def test_redact_refuses_patterns_that_cannot_work(
    patterns: tuple[Any, ...], error: type[Exception], words: str
) -> None:
    """No pattern, one matching nothing (it would match everywhere), or no regex."""
    with pytest.raises(error, match=words):
        Redact(*patterns)
    assert repr(Redact(KEY_PATTERN, re.compile("x+"))) == f"Redact({KEY_PATTERN!r}, 'x+')"


READS = ToolAnnotations(read_only=True)
DELETES = ToolAnnotations(destructive=True)
WRITES = ToolAnnotations(read_only=False, destructive=False)


@pytest.mark.parametrize(
    ("tool", "paused"),
    [
        (ToolInfo("rm", annotations=DELETES), True),
        (ToolInfo("cat", annotations=READS), False),
        (ToolInfo("save", annotations=WRITES), False),
        (ToolInfo("plain"), False),  # a function that declares nothing
        (ToolInfo("notes_slow", server="notes"), True),  # MCP's default: destructive
        (ToolInfo("notes_add", server="notes", annotations=READS), False),
        (ToolInfo("weird", annotations=ToolAnnotations(read_only=True, destructive=True)), False),
        (ToolInfo("deploy_prod"), True),  # named by the glob
    ],
)
def test_which_calls_wait_for_a_human(tool: ToolInfo, paused: bool) -> None:
    """Destructive (declared, or an MCP tool's unsaid default) and not read-only, or
    named by ``tools``."""
    assert RequireApproval(["deploy_*"]).needs(tool) is paused


def test_require_approval_pauses_then_lets_the_approved_call_run(mode: Mode) -> None:
    """The destructive call pauses with the reason naming it; approved, it runs."""
    removed: list[str] = []

    def remove(path: str) -> str:
        """Remove a file."""
        removed.append(path)
        return f"removed {path}"

    model = ScriptedModel([calling(ToolCall("c1", "remove", {"path": "x"})), "done"])
    tool = as_tool(remove, annotations=DELETES)
    gate = RequireApproval()
    with Runner(Agent("a", model, tools=[tool])) as runner:
        paused = drive(runner, mode, "clean", callbacks=[gate])
        [request] = paused.pending
        assert request.reason == "remove needs a human's approval"
        assert removed == []
        assert paused.state is not None
        decisions = {request.id: Approve()}
        if mode == "sync":
            done = runner.resume(paused.state, decisions, callbacks=[gate])
        else:
            done = asyncio.run(runner.aresume(paused.state, decisions, callbacks=[gate]))
    assert done.output == "done"
    assert removed == ["x"]


def test_an_unannotated_mcp_tool_waits_and_a_read_only_one_does_not(mode: Mode) -> None:
    """On a real (in-process) MCP server: ``notes_slow`` declares nothing, so it is taken
    as destructive and pauses; ``notes_add`` is read-only and runs."""
    model = ScriptedModel(
        [
            calling(
                ToolCall("c1", "notes_add", {"a": 1, "b": 2}),
                ToolCall("c2", "notes_slow", {"seconds": 0}),
            ),
            "done",
        ]
    )
    agent = Agent("a", model, tools=[MCPTools("notes", server=notes_server())])
    with Runner(agent) as runner:
        paused = drive(runner, mode, "go", callbacks=[RequireApproval()])
    assert [request.call.name for request in paused.pending] == ["notes_slow"]


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "words"),
    [
        (("rm",), {}, TypeError, "a list of names or globs"),
        (([""],), {}, TypeError, "a list of names or globs"),
        ((), {"destructive": 1}, TypeError, "True or False"),
        ((), {"destructive": False}, ValueError, "would pause nothing"),
    ],
)
def test_require_approval_refuses_settings_that_cannot_work(
    args: tuple[Any, ...], kwargs: dict[str, Any], error: type[Exception], words: str
) -> None:
    """A str for the list, an empty name, a flag that is no bool, nothing to pause."""
    with pytest.raises(error, match=words):
        RequireApproval(*args, **kwargs)
    assert repr(RequireApproval(["a*"])) == "RequireApproval(['a*'], destructive=True)"
