"""Tests for hook-shaped names that match no point: refused when a dispatch starts.

A guard named as another library names its hooks (``before_tool_call``, ``on_tool_start``,
``pre_tool_use`` ...) would never be called: the list is refused with a did-you-mean
naming the point meant. Helpers that contain a point's name as whole words stay allowed.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

import hooks._compile
import hooks._verdicts
from hooks import (
    BEFORE_TOOL,
    BeforePoint,
    Cont,
    Halt,
    InvalidCallbacks,
    ToolResult,
    arun_before,
    compile_callbacks,
    run_before,
)
from hooks._peers import PEERS, suggestions
from tests.helpers.dispatch import BEFORE, Dispatch, listening, make_instance, make_module, passing

# The names issue 17 found accepted and never called, and the point each one meant.
FOREIGN = {
    "before_tool_call": "before_tool",
    "on_tool_start": "before_tool",
    "on_error": "on_model_error",
    "before_run": "before_agent",
    "on_llm_start": "before_model",
    "pre_tool_use": "before_tool",
    "on_llm_end": "after_model",
    "on_tool_end": "after_tool",
    "on_chain_start": "before_agent",
    "on_llm_error": "on_model_error",
    "before_model_callback": "before_model",
    "after_tool_call": "after_tool",
    "wrap_tool_call": "wrap_tool",
    "on_agent_start": "before_agent",
    "before_tool_execute": "before_tool",
}


def make(kind: str, name: str, /, **attributes: object) -> object:
    """A module or an instance with the given attributes."""
    return (make_module if kind == "module" else make_instance)(name, **attributes)


def denying(log: list[str]) -> Any:
    """A deny-everything guard's method: it logs, then halts."""

    def deny(*args: Any) -> Any:
        log.append("denied")
        return Halt(ToolResult("denied"))

    return deny


@pytest.mark.parametrize(("foreign", "meant"), FOREIGN.items(), ids=list(FOREIGN))
def test_a_guard_named_as_a_peer_names_it_is_refused_when_a_dispatch_starts(
    dispatch: Dispatch, kind: str, foreign: str, meant: str
) -> None:
    """The guard compiles (its point could be declared later), but the first dispatch refuses
    the list, naming the guard, the name and the point meant; the guard never runs."""
    log: list[str] = []
    guard = make(kind, "Guard", **{foreign: denying(log)})
    compiled = compile_callbacks([guard, make_module("observer", on_event=listening)])
    with pytest.raises(InvalidCallbacks) as raised:
        dispatch.before(compiled, BEFORE, 1)
    error = raised.value
    assert error.callback is guard
    assert error.attribute == foreign
    assert f"defines {foreign!r}, which matches no declared hook point" in str(error)
    assert f"did you mean {meant!r}" in str(error)
    assert log == []
    with pytest.raises(InvalidCallbacks):  # a refusal is not kept: asked again, refused again
        dispatch.before(compiled, BEFORE, 1)


def test_every_peer_name_suggests_declared_points() -> None:
    """Each peer's hook name maps to points this library declares (``on_delta``: the runner's)."""
    import runner  # noqa: F401 -- declares on_delta

    for name, points in PEERS.items():
        assert suggestions(name) == points, name


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        ("on_function_begin", ("before_tool",)),
        ("after_completion", ("after_model",)),
        ("on_tool_failure", ("on_tool_error",)),
        ("wrap_tools", ("wrap_tool",)),
        ("before_chat_request", ("before_model",)),
        ("on_agent_exception", ("on_model_error", "on_tool_error")),
    ],
)
def test_other_hook_shaped_names_get_a_hint_from_their_words(
    name: str, meant: tuple[str, ...]
) -> None:
    """A hook-shaped name no peer uses is read by its words (phase, subject), else compared."""
    guard = make_instance("Guard", **{name: passing})
    with pytest.raises(InvalidCallbacks, match=f"did you mean {' or '.join(map(repr, meant))}"):
        run_before([guard], BEFORE, 1)


def test_a_name_with_no_likely_point_lists_the_declared_points() -> None:
    """Without a likely point the message lists declared points instead of guessing."""
    guard = make_instance("Guard", on_zzzzqqqq=passing)
    with pytest.raises(InvalidCallbacks, match=r"the declared points are .*before_tool"):
        run_before([guard], BEFORE, 1)


@pytest.mark.parametrize(
    "helper",
    [
        "log_before_tool",
        "before_tool_count",
        "on_model_error_count",
        "check_after_model_outcome",
        "_on_tool_start",  # private: never looked at
        "pre_process",  # neither a hook prefix nor a peer's hook name
    ],
)
def test_helpers_stay_allowed(dispatch: Dispatch, kind: str, helper: str) -> None:
    """A name containing a declared point's name as whole words (and no peer's hook name) is a
    helper; private and non-hook-shaped names are not looked at."""
    guard = make(kind, "Guard", before_probe=dispatch.hook(lambda ctx: Cont(ctx + 1)))
    setattr(guard, helper, passing)
    assert dispatch.before([guard], BEFORE, 1) == Cont(2)


def test_an_instance_attribute_with_a_peer_name_is_refused(dispatch: Dispatch) -> None:
    """A foreign name set on one instance (its class is clean) is refused for that instance."""
    log: list[str] = []
    clean = make_instance("Guard", before_probe=passing)
    assert dispatch.before([clean], BEFORE, 1) == Cont(1)
    other = type(clean)()
    other.on_tool_start = denying(log)  # type: ignore[attr-defined]
    with pytest.raises(InvalidCallbacks, match="did you mean 'before_tool'") as raised:
        dispatch.before([other], BEFORE, 1)
    assert raised.value.callback is other
    assert log == []


def test_a_point_declared_before_the_dispatch_is_honoured(dispatch: Dispatch, kind: str) -> None:
    """A name refused while no point has it is dispatched once its point is declared, even
    through a list compiled before; the check is asked again for the new points."""
    name = f"before_{uuid.uuid4().hex}"
    hook = make(kind, "Late", **{name: dispatch.hook(lambda ctx: Cont(ctx + 1))})
    compiled = compile_callbacks([hook])
    with pytest.raises(InvalidCallbacks, match=name):
        dispatch.before(compiled, BEFORE, 1)
    point: BeforePoint[int, str] = BeforePoint(name)
    assert dispatch.before(compiled, point, 1) == Cont(2)


def test_the_names_are_checked_once_per_compiled_list(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check runs when the list's first chain is built, never per call or per point."""
    calls: list[object] = []
    original = hooks._verdicts.refuse_unmatched_names

    def counting(callback: object, verdict: Any) -> None:
        calls.append(callback)
        original(callback, verdict)

    monkeypatch.setattr(hooks._compile, "refuse_unmatched_names", counting)
    guard = make_instance("Guard", before_probe=passing, before_tool=passing)
    compiled = compile_callbacks([guard])
    for _ in range(3):
        run_before(compiled, BEFORE, 1)
        asyncio.run(arun_before(compiled, BEFORE, 1))
    ctx: Any = object()
    run_before(compiled, BEFORE_TOOL, ctx)
    assert calls == [guard]


def test_a_sum_of_compiled_lists_is_checked() -> None:
    """Adding two compiled lists, one with a foreign name, refuses the sum's dispatch."""
    clean = compile_callbacks([make_module("clean", before_probe=passing)])
    assert run_before(clean, BEFORE, 1) == Cont(1)
    foreign = compile_callbacks([make_module("foreign", pre_tool_use=passing)])
    with pytest.raises(InvalidCallbacks, match="pre_tool_use"):
        run_before(clean + foreign, BEFORE, 1)
