"""Tests for the tag table: which results are legal where, payloads included, on every path.

Each dispatch test runs sync and async (``mode``) and on both paths: the fast loops
(``path == "fast"``) and the general one a ``Trace`` selects (``path == "traced"``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from returns.result import Failure, Success

from hooks import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    AfterPoint,
    AgentContext,
    BeforePoint,
    Cont,
    DispatchPolicy,
    ErrorPoint,
    Fallback,
    Halt,
    InvalidResult,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Retry,
    ToolCall,
    ToolContext,
    ToolResult,
    Trace,
    compile_callbacks,
)
from hooks._rules import TAGS, expected
from tests.helpers.dispatch import Boom, Dispatch, described, make_instance, make_module

INVOCATION = Invocation("inv", "assistant", "assistant")
TOOL_CTX = ToolContext(INVOCATION, ToolCall("c1", "add", {"a": 1}))
MODEL_CTX = ModelContext(INVOCATION, ModelRequest((Message("user", "hi"),)))


class ToolContextPlus(ToolContext):
    """A subclass of the point's context type."""


# -- the table ----------------------------------------------------------------------


def test_the_table_lists_each_kinds_tags() -> None:
    """Before allows Cont and Halt (and Pause where the point can pause), after and wrap
    Success and Failure, error Retry, Fallback, Failure."""
    labels = {kind: tuple(tag.label for tag in tags) for kind, tags in TAGS.items()}
    assert labels == {
        "before": ("Cont", "Halt"),
        "pausable": ("Cont", "Halt", "Pause"),
        "after": ("Success", "Failure"),
        "error": ("Retry", "Fallback", "Failure"),
        "wrap": ("Success", "Failure"),
    }
    ends = {kind: tuple(tag.ends for tag in tags) for kind, tags in TAGS.items()}
    assert ends == {
        "before": (False, True),
        "pausable": (False, True, True),
        "after": (False, False),
        "error": (True, True, False),
        "wrap": (False, False),
    }


@pytest.mark.parametrize(
    ("point", "names"),
    [
        (BEFORE_TOOL, ("Cont[ToolContext]", "Halt[ToolResult]", "Pause")),
        (BEFORE_MODEL, ("Cont[ModelContext]", "Halt[ModelResponse]")),
        (AFTER_MODEL, ("Success[ModelResponse]", "Failure[Exception]")),
        (ON_TOOL_ERROR, ("Retry[ToolContext]", "Fallback[ToolResult]", "Failure[Exception]")),
        (BeforePoint("before_untyped_rule"), ("Cont", "Halt")),
    ],
    ids=repr,
)
def test_expected_names_the_payload_types(point: Any, names: tuple[str, ...]) -> None:
    """A point with payload types names them in what it expects; one without names the tags."""
    assert expected(point) == names


@pytest.mark.parametrize(
    ("point", "context", "value"),
    [
        (BEFORE_AGENT, AgentContext, ModelResponse),
        (AFTER_AGENT, AgentContext, ModelResponse),
        (BEFORE_MODEL, ModelContext, ModelResponse),
        (AFTER_MODEL, ModelContext, ModelResponse),
        (ON_MODEL_ERROR, ModelContext, ModelResponse),
        (BEFORE_TOOL, ToolContext, ToolResult),
        (AFTER_TOOL, ToolContext, ToolResult),
        (ON_TOOL_ERROR, ToolContext, ToolResult),
    ],
    ids=repr,
)
def test_builtin_points_declare_their_payload_types(
    point: Any, context: type[object], value: type[object]
) -> None:
    """Each built-in point carries the classes of its context and of its result."""
    assert (point.context, point.value) == (context, value)


# -- illegal payloads at the built-in points ----------------------------------------


def _bad(
    dispatch: Dispatch, which: str, result: object, trace: Trace | None, kind: str = "module"
) -> tuple[InvalidResult, object]:
    """Dispatch a built-in tool point whose one callback returns ``result``; the error."""
    name = {"before": "before_tool", "after": "after_tool", "error": "on_tool_error"}[which]
    make = make_module if kind == "module" else make_instance
    guard = make("guard", **{name: dispatch.hook(lambda *args: result)})
    with pytest.raises(InvalidResult) as excinfo:
        tool_point(dispatch, which, [guard], trace)
    return excinfo.value, guard


def tool_point(
    dispatch: Dispatch, which: str, callbacks: list[object], trace: Trace | None
) -> object:
    """Dispatch the built-in tool point of ``which``: ``Success(ToolResult("ok"))`` after, a
    ``Failure(Boom())`` on error."""
    if which == "before":
        return dispatch.before(callbacks, BEFORE_TOOL, TOOL_CTX, trace=trace)
    if which == "after":
        outcome = Success(ToolResult("ok"))
        return dispatch.after(callbacks, AFTER_TOOL, outcome, TOOL_CTX, trace=trace)
    failure: Failure[Exception] = Failure(Boom())
    return dispatch.on_error(callbacks, ON_TOOL_ERROR, failure, TOOL_CTX, trace=trace)


@pytest.mark.parametrize(
    ("which", "result", "problem"),
    [
        ("before", Halt("refused"), "Halt(str) 'refused'; expected Halt[ToolResult]"),
        ("before", Cont("x"), "Cont(str) 'x'; expected Cont[ToolContext]"),
        ("before", Cont(MODEL_CTX), "Cont(ModelContext) ModelContext("),
        ("after", Success("done"), "Success(str) 'done'; expected Success[ToolResult]"),
        ("after", Failure("oops"), "Failure(str) 'oops'; expected Failure[Exception]"),
        ("error", Fallback("x"), "Fallback(str) 'x'; expected Fallback[ToolResult]"),
        ("error", Retry(None), "Retry(NoneType) None; expected Retry[ToolContext]"),
        ("error", Failure(KeyboardInterrupt()), "expected Failure[Exception]"),
    ],
    ids=repr,
)
def test_a_wrong_payload_is_an_invalid_result(
    dispatch: Dispatch, trace: Trace | None, which: str, result: object, problem: str
) -> None:
    """A legal tag carrying a payload of the wrong type raises InvalidResult naming the callback,
    the point, the expected payload and what came back."""
    error, guard = _bad(dispatch, which, result, trace)
    assert error.problem is not None
    assert problem in error.problem
    assert error.callback is guard
    assert error.value is result
    assert error.point == {"before": "before_tool", "after": "after_tool"}.get(
        which, "on_tool_error"
    )
    message = str(error)
    assert message.startswith(f"{described('module', 'guard')}.{error.point} returned ")
    assert problem in message


@pytest.mark.parametrize("trace", [None, Trace()], ids=["fast", "traced"])
def test_expected_lists_the_typed_tags(dispatch: Dispatch, trace: Trace | None) -> None:
    """``InvalidResult.expected`` names every legal tag with the point's payload types."""
    error, _ = _bad(dispatch, "before", None, trace)
    assert error.expected == ("Cont[ToolContext]", "Halt[ToolResult]", "Pause")
    assert error.problem is None
    assert "expected Cont[ToolContext] or Halt[ToolResult]" in str(error)


@pytest.mark.parametrize(
    ("which", "result"),
    [
        ("before", Halt(ToolResult("no", is_error=True))),
        ("before", Cont(dataclasses.replace(TOOL_CTX, attempt=2))),
        ("before", Cont(ToolContextPlus(INVOCATION, TOOL_CTX.call))),
        ("after", Success(ToolResult("changed"))),
        ("after", Failure(Boom())),
        ("error", Fallback(ToolResult("fallback"))),
        ("error", Retry(dataclasses.replace(TOOL_CTX, attempt=2))),
        ("error", Failure(ValueError())),
    ],
    ids=repr,
)
def test_payloads_of_the_right_type_pass(
    dispatch: Dispatch, trace: Trace | None, which: str, result: object
) -> None:
    """A payload of the point's type (or a subclass of it) is handed on or returned as is."""
    name = {"before": "before_tool", "after": "after_tool", "error": "on_tool_error"}[which]
    guard = make_module("guard", **{name: dispatch.hook(lambda *args: result)})
    got = tool_point(dispatch, which, [guard], trace)
    if isinstance(result, Cont):
        assert isinstance(got, Cont)
        assert got.ctx is result.ctx
    else:
        assert got is result


def test_the_given_context_is_not_checked_again(dispatch: Dispatch, trace: Trace | None) -> None:
    """``Cont(ctx)`` and ``Retry(ctx)`` with the very context given pass, whatever its type:
    the caller chose it."""
    stand_in: Any = object()
    keep = make_module(
        "keep",
        before_tool=dispatch.hook(Cont),
        on_tool_error=dispatch.hook(lambda failure, ctx: Retry(ctx)),
    )
    before = dispatch.before([keep, keep], BEFORE_TOOL, stand_in, trace=trace)
    assert isinstance(before, Cont)
    assert before.ctx is stand_in
    failure: Failure[Exception] = Failure(Boom())
    error = dispatch.on_error([keep], ON_TOOL_ERROR, failure, stand_in, trace=trace)
    assert isinstance(error, Retry)
    assert error.ctx is stand_in


def test_an_unchanged_outcome_is_not_checked_again(dispatch: Dispatch, trace: Trace | None) -> None:
    """An after callback handing on the very outcome it got passes, whatever the caller put in."""
    keep = make_module("keep", after_tool=dispatch.hook(lambda outcome, ctx: outcome))
    odd: Any = Success("not a ToolResult")
    assert dispatch.after([keep], AFTER_TOOL, odd, TOOL_CTX, trace=trace) is odd


def test_points_without_payload_types_check_only_tags(
    dispatch: Dispatch, trace: Trace | None
) -> None:
    """At a point declared without ``context`` / ``value``, any payload passes."""
    point: BeforePoint[Any, Any] = BeforePoint("before_untyped_payloads")
    after: AfterPoint[Any, Any] = AfterPoint("after_untyped_payloads")
    error_point: ErrorPoint[Any, Any] = ErrorPoint("on_untyped_payloads")
    loose = make_module(
        "loose",
        before_untyped_payloads=dispatch.hook(lambda ctx: Cont("anything")),
        after_untyped_payloads=dispatch.hook(lambda outcome, ctx: Success(3)),
        on_untyped_payloads=dispatch.hook(lambda failure, ctx: Fallback(None)),
    )
    halt = make_module("halt", before_untyped_payloads=lambda ctx: Halt(42))
    assert dispatch.before([loose, halt], point, 1, trace=trace) == Halt(42)
    assert dispatch.after([loose], after, Success("x"), 1, trace=trace) == Success(3)
    failure: Failure[Exception] = Failure(Boom())
    assert dispatch.on_error([loose], error_point, failure, 1, trace=trace) == Fallback(None)


def test_user_points_with_payload_types_are_checked(
    dispatch: Dispatch, trace: Trace | None
) -> None:
    """A user point declared with ``context`` and ``value`` checks its payloads like a built-in."""
    point = BeforePoint("before_typed_rule", context=int, value=list)
    cache = make_module("cache", before_typed_rule=dispatch.hook(lambda ctx: Halt({"a": 1})))
    with pytest.raises(InvalidResult, match=r"Halt\(dict\) \{'a': 1\}; expected Halt\[list\]"):
        dispatch.before([cache], point, 1, trace=trace)


def test_a_wrong_payload_stops_the_chain(dispatch: Dispatch, trace: Trace | None) -> None:
    """The callbacks after one that handed on a wrong context do not run."""
    ran: list[str] = []

    def later(ctx: ToolContext) -> Cont[ToolContext]:
        ran.append("later")
        return Cont(ctx)

    wrong = make_module("wrong", before_tool=dispatch.hook(lambda ctx: Cont("x")))
    callbacks = [wrong, make_module("later", before_tool=later)]
    with pytest.raises(InvalidResult):
        dispatch.before(callbacks, BEFORE_TOOL, TOOL_CTX, trace=trace)
    assert ran == []


def test_a_wrong_payload_waits_under_continue_on_error(dispatch: Dispatch) -> None:
    """Under ``continue_on_error`` a wrong payload is raised when the chain ends, like an error."""
    ran: list[str] = []

    def later(ctx: ToolContext) -> Cont[ToolContext]:
        ran.append("later")
        return Cont(ctx)

    wrong = make_module("wrong", before_tool=dispatch.hook(lambda ctx: Halt("no")))
    policy = DispatchPolicy(continue_on_error=True)
    callbacks = [wrong, make_module("later", before_tool=later)]
    with pytest.raises(InvalidResult, match=r"expected Halt\[ToolResult\]"):
        dispatch.before(callbacks, BEFORE_TOOL, TOOL_CTX, policy=policy)
    assert ran == ["later"]


@pytest.mark.parametrize("which", ["before", "after", "error"])
def test_fast_and_general_paths_refuse_alike(which: str) -> None:
    """The fast loops and the general path raise the same message for the same bad payload."""
    result = {"before": Halt("x"), "after": Success("x"), "error": Fallback("x")}[which]
    fast, _ = _bad(Dispatch("sync"), which, result, None)
    traced, _ = _bad(Dispatch("sync"), which, result, Trace())
    asynchronous, _ = _bad(Dispatch("async"), which, result, None)
    assert str(fast) == str(traced) == str(asynchronous)


def test_a_compiled_list_checks_payloads_too() -> None:
    """Compiled lists dispatch through the same checks."""
    compiled = compile_callbacks([make_module("guard", before_model=lambda ctx: Halt("no"))])
    with pytest.raises(InvalidResult, match=r"Halt\[ModelResponse\]"):
        Dispatch("sync").before(compiled, BEFORE_MODEL, MODEL_CTX)


@pytest.mark.parametrize("form", ["sync", "async"])
def test_a_pause_where_nothing_can_wait_says_where_pause_is_legal(form: str) -> None:
    """``Pause`` from ``before_model`` is an ``InvalidResult`` that names the points a call
    can wait at, the point it came from and what that point allows."""
    from hooks import Pause, arun_before, run_before

    class Pausing:
        def before_model(self, ctx: object) -> object:
            return Pause("ask first")

    ctx = MODEL_CTX

    def dispatch() -> object:
        if form == "sync":
            return run_before([Pausing()], BEFORE_MODEL, ctx)
        return asyncio.run(arun_before([Pausing()], BEFORE_MODEL, ctx))

    with pytest.raises(InvalidResult) as caught:
        dispatch()
    message = str(caught.value)
    assert "returned Pause (Pause('ask first')); Pause is legal only where a call" in message
    assert "(a PausablePoint: before_tool), not at before_model" in message
    assert message.endswith("expected Cont[ModelContext] or Halt[ModelResponse]")
