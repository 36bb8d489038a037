"""Tests for dispatch: every dispatch rule of ``hooks``' docstring, sync and async.

Most tests run four ways: sync or async dispatch (``mode``) over callbacks given as
modules or as instances (``kind``). In async mode some callbacks of a chain are
``async def`` and the rest plain, so both kinds of method are exercised together.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import pickle
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import pytest
from returns.result import Failure, Success

from hooks import (
    AFTER_MODEL,
    BEFORE_MODEL,
    ON_MODEL_ERROR,
    AfterPoint,
    BeforePoint,
    CompiledCallbacks,
    Cont,
    DispatchPolicy,
    ErrorPoint,
    ErrorResult,
    Fallback,
    Halt,
    InvalidCallbacks,
    InvalidResult,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    Retry,
    StopRun,
    arun_before,
    compile_callbacks,
    observing,
    run_before,
)
from tests.helpers.dispatch import (
    AFTER,
    BEFORE,
    HOOK,
    ON_ERROR,
    Boom,
    Dispatch,
    Fn,
    Make,
    described,
    listening,
    make_instance,
    make_module,
    passing,
    raising,
    rec,
)

EXPECTED_TAGS = {
    "before": ("Cont", "Halt"),
    "after": ("Success", "Failure[Exception]"),
    "error": ("Retry", "Fallback", "Failure[Exception]"),
}


@pytest.fixture
def make(kind: str) -> Make:
    """Builds callbacks of ``kind``."""
    return make_module if kind == "module" else make_instance


which_point = pytest.mark.parametrize("which", ["before", "after", "error"])


@pytest.fixture
def model_ctx() -> ModelContext:
    """A built-in model context."""
    invocation = Invocation(id="inv", agent="assistant", branch="assistant")
    return ModelContext(invocation, ModelRequest((Message("user", "hi"),)))


# -- list order; callbacks without the method are skipped ------------------------------


def test_before_hooks_run_in_list_order(dispatch: Dispatch, make: Make) -> None:
    """Before methods run in list order, each on the context the previous one returned."""
    log: list[str] = []
    callbacks = [
        make("a", before_probe=dispatch.hook(rec(log, "a", lambda ctx: Cont(ctx + 1)))),
        make("b", before_probe=rec(log, "b", lambda ctx: Cont(ctx * 10))),
        make("c", before_probe=dispatch.hook(rec(log, "c", lambda ctx: Cont(ctx - 3)))),
    ]
    assert dispatch.before(callbacks, BEFORE, 1) == Cont(17)
    assert log == ["a", "b", "c"]


def test_after_hooks_run_in_list_order(dispatch: Dispatch, make: Make) -> None:
    """After methods run in list order, each on the outcome the previous one returned."""
    log: list[str] = []
    callbacks = [
        make("a", after_probe=rec(log, "a", lambda o, ctx: Success(o.unwrap() + ctx))),
        make(
            "b", after_probe=dispatch.hook(rec(log, "b", lambda o, ctx: Success(o.unwrap() * 10)))
        ),
        make("c", after_probe=rec(log, "c", lambda o, ctx: Success(o.unwrap() - 3))),
    ]
    assert dispatch.after(callbacks, AFTER, Success(1), 1) == Success(17)
    assert log == ["a", "b", "c"]


def test_error_hooks_run_in_list_order(dispatch: Dispatch, make: Make) -> None:
    """Error methods run in list order while none recovers."""
    log: list[str] = []
    callbacks = [
        make(name, on_probe_error=hook(rec(log, name, passing)))
        for name, hook in [("a", dispatch.hook), ("b", lambda f: f), ("c", dispatch.hook)]
    ]
    failure: Failure[Exception] = Failure(Boom())
    assert dispatch.on_error(callbacks, ON_ERROR, failure, 1) is failure
    assert log == ["a", "b", "c"]


@which_point
def test_callbacks_without_the_method_are_skipped(
    dispatch: Dispatch, make: Make, which: str
) -> None:
    """A callback that does not define the point's method is skipped; the others still run."""
    log: list[str] = []
    others = {name: rec(log, "other", passing) for name in HOOK.values() if name != HOOK[which]}
    callbacks = [
        make("a", **{HOOK[which]: dispatch.hook(rec(log, "a", passing))}),
        make("observer", on_event=listening),
        make("others", **others),
        observing(listening),
        make("b", **{HOOK[which]: rec(log, "b", passing)}),
    ]
    dispatch.probe(which, callbacks)
    assert log == ["a", "b"]


# -- an empty chain is the identity ----------------------------------------------------


def test_empty_chain_returns_the_same_context(dispatch: Dispatch, model_ctx: ModelContext) -> None:
    """``run_before([], P, ctx)`` is ``Cont`` of the very same context object."""
    result = dispatch.before([], BEFORE_MODEL, model_ctx)
    assert isinstance(result, Cont)
    assert result.ctx is model_ctx


@pytest.mark.parametrize(
    "outcome",
    [Success(ModelResponse("answer")), Failure(Boom("failed"))],
    ids=["success", "failure"],
)
def test_empty_chain_returns_the_same_outcome(
    dispatch: Dispatch, model_ctx: ModelContext, outcome: Outcome[ModelResponse]
) -> None:
    """``run_after([], P, outcome, ctx)`` returns the same outcome object."""
    assert dispatch.after([], AFTER_MODEL, outcome, model_ctx) is outcome


def test_empty_chain_returns_the_same_failure(dispatch: Dispatch, model_ctx: ModelContext) -> None:
    """``run_on_error([], P, failure, ctx)`` returns the same ``Failure`` object."""
    failure: Failure[Exception] = Failure(Boom())
    assert dispatch.on_error([], ON_MODEL_ERROR, failure, model_ctx) is failure


def test_chain_of_callbacks_without_the_method_is_the_identity(
    dispatch: Dispatch, make: Make, model_ctx: ModelContext
) -> None:
    """Callbacks that define none of the points leave context, outcome and failure untouched."""
    callbacks = [make("x", before_tool=passing), make("y", on_event=listening)]
    before = dispatch.before(callbacks, BEFORE_MODEL, model_ctx)
    assert isinstance(before, Cont)
    assert before.ctx is model_ctx
    outcome: Outcome[ModelResponse] = Success(ModelResponse("a"))
    assert dispatch.after(callbacks, AFTER_MODEL, outcome, model_ctx) is outcome
    failure: Failure[Exception] = Failure(Boom())
    assert dispatch.on_error(callbacks, ON_MODEL_ERROR, failure, model_ctx) is failure


def test_cont_with_the_same_context_keeps_the_object(
    dispatch: Dispatch, make: Make, model_ctx: ModelContext
) -> None:
    """Callbacks that return ``Cont(ctx)`` unchanged hand the same context object on."""
    callbacks = [make("a", before_model=dispatch.hook(passing)), make("b", before_model=passing)]
    result = dispatch.before(callbacks, BEFORE_MODEL, model_ctx)
    assert isinstance(result, Cont)
    assert result.ctx is model_ctx


# -- before: Cont threads the context, the first Halt wins -----------------------------


def test_each_before_hook_receives_the_previous_context(dispatch: Dispatch, make: Make) -> None:
    """Each ``Cont(ctx')`` hands exactly ``ctx'`` to the next callback."""
    seen: list[object] = []
    contexts = [[1], [2], [3]]

    def step(index: int) -> Fn:
        def hook(ctx: object) -> Cont[object]:
            seen.append(ctx)
            return Cont(contexts[index])

        return hook

    start: list[int] = [0]
    callbacks = [
        make("a", before_probe=dispatch.hook(step(0))),
        make("b", before_probe=step(1)),
        make("c", before_probe=dispatch.hook(step(2))),
    ]
    result = dispatch.before(callbacks, BeforePoint[list[int], str]("before_probe"), start)
    assert [id(ctx) for ctx in seen] == [id(start), id(contexts[0]), id(contexts[1])]
    assert isinstance(result, Cont)
    assert result.ctx is contexts[2]


def test_first_halt_stops_the_chain_and_is_returned(dispatch: Dispatch, make: Make) -> None:
    """The first ``Halt`` ends the chain, later callbacks do not run, and that Halt is returned."""
    log: list[str] = []
    halt = Halt("stop")
    callbacks = [
        make("a", before_probe=dispatch.hook(rec(log, "a", lambda ctx: Cont(ctx + 1)))),
        make("b", before_probe=dispatch.hook(rec(log, "b", lambda ctx: halt))),
        make("c", before_probe=rec(log, "c", lambda ctx: Halt("later"))),
        make("d", before_probe=dispatch.hook(rec(log, "d", passing))),
    ]
    assert dispatch.before(callbacks, BEFORE, 1) is halt
    assert log == ["a", "b"]


@pytest.mark.parametrize("value", ["", 0, {}, [], None, False, 0.0])
def test_halt_with_a_falsy_value_halts(dispatch: Dispatch, make: Make, value: object) -> None:
    """``Halt("")``, ``Halt(0)``, ``Halt({})`` and other falsy values still halt the chain."""
    log: list[str] = []
    callbacks = [
        make("a", before_probe=dispatch.hook(rec(log, "a", lambda ctx: Halt(value)))),
        make("b", before_probe=rec(log, "b", passing)),
    ]
    result = dispatch.before(callbacks, BEFORE, 1)
    assert type(result) is Halt
    assert result.value is value
    assert log == ["a"]


# -- after: every callback runs on the previous result ---------------------------------


def test_after_hooks_each_get_the_previous_result_and_never_stop(
    dispatch: Dispatch, make: Make
) -> None:
    """Every after method runs, on the previous one's result, Success or Failure alike."""
    seen: list[object] = []
    first: Outcome[int] = Success(1)
    returned: list[Outcome[int]] = [
        Failure(Boom("a")),
        Failure(Boom("b")),
        Success(5),
        Failure(KeyError("d")),
    ]

    def step(index: int) -> Fn:
        def hook(outcome: object, ctx: object) -> Outcome[int]:
            seen.append(outcome)
            return returned[index]

        return hook

    callbacks = [
        make(name, after_probe=(dispatch.hook if index % 2 else (lambda f: f))(step(index)))
        for index, name in enumerate("abcd")
    ]
    assert dispatch.after(callbacks, AFTER, first, 1) is returned[-1]
    assert [id(outcome) for outcome in seen] == [id(first)] + [id(o) for o in returned[:-1]]


def test_after_hooks_receive_the_context(dispatch: Dispatch, make: Make) -> None:
    """After methods receive the dispatch's context as their second argument."""
    seen: list[object] = []
    ctx = object()

    def hook(outcome: Outcome[int], ctx: object) -> Outcome[int]:
        seen.append(ctx)
        return outcome

    callbacks = [make("a", after_probe=dispatch.hook(hook)), make("b", after_probe=hook)]
    dispatch.after(callbacks, AfterPoint[object, int]("after_probe"), Success(1), ctx)
    assert seen == [ctx, ctx]


# -- on_error: the first Retry or Fallback wins, else the last Failure -----------------


def test_error_hooks_pass_the_failure_along(dispatch: Dispatch, make: Make) -> None:
    """Each error method gets the previous ``Failure``; without a recovery the last is returned."""
    seen: list[object] = []
    first: Failure[Exception] = Failure(Boom("first"))
    returned: list[Failure[Exception]] = [Failure(Boom("a")), Failure(KeyError("b"))]

    def step(index: int) -> Fn:
        def hook(failure: object, ctx: object) -> object:
            seen.append(failure)
            return failure if index == 1 else returned[index // 2]

        return hook

    callbacks = [
        make("a", on_probe_error=dispatch.hook(step(0))),
        make("b", on_probe_error=step(1)),
        make("c", on_probe_error=dispatch.hook(step(2))),
    ]
    assert dispatch.on_error(callbacks, ON_ERROR, first, 1) is returned[1]
    assert [id(failure) for failure in seen] == [id(first), id(returned[0]), id(returned[0])]


@pytest.mark.parametrize(
    "recovery",
    [Retry(2), Retry(2, delay=0.5), Retry(2, delay=0), Fallback("x"), Fallback("")],
    ids=repr,
)
def test_first_recovery_stops_the_error_chain(
    dispatch: Dispatch, make: Make, recovery: ErrorResult[int, str]
) -> None:
    """The first ``Retry`` or ``Fallback`` ends the chain and is returned as is."""
    log: list[str] = []
    callbacks = [
        make("a", on_probe_error=rec(log, "a", lambda f, ctx: Failure(Boom("new")))),
        make("b", on_probe_error=dispatch.hook(rec(log, "b", lambda f, ctx: recovery))),
        make("c", on_probe_error=rec(log, "c", lambda f, ctx: Fallback("later"))),
    ]
    assert dispatch.on_error(callbacks, ON_ERROR, Failure(Boom()), 1) is recovery
    assert log == ["a", "b"]


# -- exceptions propagate unchanged, with a note ---------------------------------------


@which_point
@pytest.mark.parametrize(
    "exc_factory",
    [lambda: Boom("x"), lambda: KeyError("k"), lambda: StopRun("done"), lambda: TypeError("t")],
    ids=["Boom", "KeyError", "StopRun", "TypeError"],
)
def test_exception_propagates_unchanged_with_a_note(
    dispatch: Dispatch,
    make: Make,
    kind: str,
    which: str,
    exc_factory: Callable[[], Exception],
) -> None:
    """A callback's exception escapes as the same object, with a note naming callback and point."""
    log: list[str] = []
    exc = exc_factory()
    callbacks = [
        make("ok", **{HOOK[which]: dispatch.hook(rec(log, "ok", passing))}),
        make("raiser", **{HOOK[which]: rec(log, "raiser", raising(exc))}),
        make("never", **{HOOK[which]: rec(log, "never", passing)}),
    ]
    with pytest.raises(type(exc)) as excinfo:
        dispatch.probe(which, callbacks)
    assert excinfo.value is exc
    assert type(excinfo.value) is type(exc)
    assert exc.__notes__ == [
        f"raised in callback {described(kind, 'raiser')} at hook point {HOOK[which]!r}"
    ]
    assert log == ["ok", "raiser"]


@which_point
def test_exception_from_an_async_hook_gets_a_note(make: Make, kind: str, which: str) -> None:
    """An exception raised inside an awaited ``async def`` hook is annotated the same way."""
    exc = Boom("async")
    callbacks = [make("araiser", **{HOOK[which]: Dispatch("async").hook(raising(exc))})]
    with pytest.raises(Boom) as excinfo:
        Dispatch("async").probe(which, callbacks)
    assert excinfo.value is exc
    assert exc.__notes__ == [
        f"raised in callback {described(kind, 'araiser')} at hook point {HOOK[which]!r}"
    ]


def test_existing_notes_are_kept(dispatch: Dispatch, make: Make) -> None:
    """A note already on the exception stays, and the dispatch note comes after it."""
    exc = Boom()
    exc.add_note("from the callback")
    with pytest.raises(Boom):
        dispatch.before([make("raiser", before_probe=raising(exc))], BEFORE, 1)
    assert exc.__notes__[0] == "from the callback"
    assert len(exc.__notes__) == 2
    assert "before_probe" in exc.__notes__[1]


@which_point
def test_note_names_the_raising_module_when_modules_share_a_function(
    dispatch: Dispatch, which: str
) -> None:
    """Two modules holding one function object: the note names the one whose call raised."""
    calls: list[int] = []

    def shared(*args: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise Boom("second call")
        return passing(*args)

    first = make_module("first", **{HOOK[which]: shared})
    second = make_module("second", **{HOOK[which]: shared})
    with pytest.raises(Boom) as excinfo:
        dispatch.probe(which, [first, second])
    assert excinfo.value.__notes__ == [
        f"raised in callback module 'second' at hook point {HOOK[which]!r}"
    ]


@which_point
def test_invalid_result_names_the_module_that_returned_it_when_modules_share_a_function(
    dispatch: Dispatch, which: str
) -> None:
    """Two modules holding one function object: InvalidResult blames the one whose call failed."""
    calls: list[int] = []

    def shared(*args: Any) -> Any:
        calls.append(1)
        return None if len(calls) == 2 else passing(*args)

    first = make_module("first", **{HOOK[which]: shared})
    second = make_module("second", **{HOOK[which]: shared})
    with pytest.raises(InvalidResult) as excinfo:
        dispatch.probe(which, [first, second])
    assert excinfo.value.callback is second


@which_point
@pytest.mark.parametrize(
    "policy",
    [None, DispatchPolicy(), DispatchPolicy(continue_on_error=True)],
    ids=["default", "policy", "continue_on_error"],
)
def test_stop_iteration_keeps_its_type_in_sync_dispatch(
    make: Make, which: str, policy: DispatchPolicy | None
) -> None:
    """A callback's StopIteration escapes sync dispatch as StopIteration, not RuntimeError."""
    exc = StopIteration("exhausted")
    with pytest.raises(StopIteration) as excinfo:
        Dispatch("sync").probe(which, [make("gen", **{HOOK[which]: raising(exc)})], policy)
    assert excinfo.value is exc
    assert "gen" in excinfo.value.__notes__[0]


def test_a_callbacks_own_runtime_error_keeps_its_type(make: Make) -> None:
    """A RuntimeError a callback raises from a StopIteration escapes as that RuntimeError."""
    exc = RuntimeError("wrapped")
    exc.__cause__ = StopIteration()
    with pytest.raises(RuntimeError) as excinfo:
        run_before([make("r", before_probe=raising(exc))], BEFORE, 1, policy=DispatchPolicy())
    assert excinfo.value is exc


class Abort(BaseException):
    """A BaseException that is not an Exception."""


def test_base_exceptions_are_not_swallowed(dispatch: Dispatch, make: Make) -> None:
    """A BaseException from a callback propagates, and stops the chain."""
    log: list[str] = []
    callbacks = [
        make("a", before_probe=dispatch.hook(rec(log, "a", raising(Abort())))),
        make("b", before_probe=rec(log, "b", passing)),
    ]
    with pytest.raises(Abort):
        dispatch.before(callbacks, BEFORE, 1)
    assert log == ["a"]


# -- DispatchPolicy --------------------------------------------------------------------


def test_continue_on_halt_runs_every_callback_and_the_last_halt_wins(
    dispatch: Dispatch, make: Make
) -> None:
    """With ``continue_on_halt`` every callback runs and the last ``Halt`` is returned."""
    log: list[str] = []
    last = Halt("second")
    callbacks = [
        make("a", before_probe=dispatch.hook(rec(log, "a", lambda ctx: Halt("first")))),
        make("b", before_probe=rec(log, "b", lambda ctx: Cont(ctx + 1))),
        make("c", before_probe=dispatch.hook(rec(log, "c", lambda ctx: last))),
        make("d", before_probe=rec(log, "d", lambda ctx: Cont(ctx + 1))),
    ]
    policy = DispatchPolicy(continue_on_halt=True)
    assert dispatch.before(callbacks, BEFORE, 1, policy=policy) is last
    assert log == ["a", "b", "c", "d"]


def test_continue_on_halt_without_a_halt_threads_the_context(
    dispatch: Dispatch, make: Make
) -> None:
    """With ``continue_on_halt`` and no ``Halt`` the result is ``Cont`` of the threaded context."""
    callbacks = [
        make("a", before_probe=dispatch.hook(lambda ctx: Cont(ctx + 1))),
        make("b", before_probe=lambda ctx: Cont(ctx * 3)),
    ]
    policy = DispatchPolicy(continue_on_halt=True)
    assert dispatch.before(callbacks, BEFORE, 1, policy=policy) == Cont(6)


def test_continue_on_error_in_before_goes_on_and_raises_the_first(
    dispatch: Dispatch, make: Make, kind: str
) -> None:
    """With ``continue_on_error`` the chain goes on with the context it had, then the first
    exception is raised; every exception got its note."""
    seen: list[object] = []
    first, second = Boom("first"), KeyError("second")

    def record(result: Fn) -> Fn:
        def hook(ctx: object) -> object:
            seen.append(ctx)
            return result(ctx)

        return hook

    callbacks = [
        make("a", before_probe=dispatch.hook(record(lambda ctx: Cont(ctx + 1)))),
        make("r1", before_probe=record(raising(first))),
        make("b", before_probe=dispatch.hook(record(lambda ctx: Cont(ctx * 10)))),
        make("r2", before_probe=dispatch.hook(record(raising(second)))),
        make("c", before_probe=record(lambda ctx: Cont(ctx + 5))),
    ]
    with pytest.raises(Boom) as excinfo:
        dispatch.before(callbacks, BEFORE, 1, policy=DispatchPolicy(continue_on_error=True))
    assert excinfo.value is first
    assert seen == [1, 2, 2, 20, 20]
    assert described(kind, "r1") in first.__notes__[0]
    assert described(kind, "r2") in second.__notes__[0]


@pytest.mark.parametrize("continue_on_halt", [False, True])
def test_continue_on_error_beats_halt(
    dispatch: Dispatch, make: Make, continue_on_halt: bool
) -> None:
    """With ``continue_on_error`` a raised exception wins over a later callback's ``Halt``."""
    log: list[str] = []
    first = Boom("first")
    callbacks = [
        make("r", before_probe=dispatch.hook(rec(log, "r", raising(first)))),
        make("h", before_probe=rec(log, "h", lambda ctx: Halt("halted"))),
        make("c", before_probe=dispatch.hook(rec(log, "c", passing))),
    ]
    policy = DispatchPolicy(continue_on_halt=continue_on_halt, continue_on_error=True)
    with pytest.raises(Boom) as excinfo:
        dispatch.before(callbacks, BEFORE, 1, policy=policy)
    assert excinfo.value is first
    assert log == (["r", "h", "c"] if continue_on_halt else ["r", "h"])


def test_continue_on_error_in_after_goes_on_and_raises_the_first(
    dispatch: Dispatch, make: Make
) -> None:
    """After hooks go on past a raising one with the outcome they had; the first error is raised."""
    seen: list[object] = []
    first, second = Boom("first"), Boom("second")

    def record(result: Fn) -> Fn:
        def hook(outcome: Outcome[int], ctx: object) -> object:
            seen.append(outcome.value_or(-1))
            return result(outcome, ctx)

        return hook

    callbacks = [
        make("r1", after_probe=dispatch.hook(record(raising(first)))),
        make("a", after_probe=record(lambda o, ctx: Success(o.unwrap() + 1))),
        make("r2", after_probe=record(raising(second))),
        make("b", after_probe=dispatch.hook(record(lambda o, ctx: Success(o.unwrap() * 10)))),
    ]
    with pytest.raises(Boom) as excinfo:
        dispatch.after(
            callbacks, AFTER, Success(1), 1, policy=DispatchPolicy(continue_on_error=True)
        )
    assert excinfo.value is first
    assert seen == [1, 1, 2, 2]
    assert second.__notes__


def test_continue_on_error_in_on_error_goes_on_and_beats_a_recovery(
    dispatch: Dispatch, make: Make
) -> None:
    """Error hooks go on past a raising one with the failure they had; the first error beats a
    later ``Fallback``."""
    seen: list[object] = []
    first = Boom("first")
    start: Failure[Exception] = Failure(Boom("start"))
    replaced: Failure[Exception] = Failure(KeyError("replaced"))

    def record(result: Fn) -> Fn:
        def hook(failure: object, ctx: object) -> object:
            seen.append(failure)
            return result(failure, ctx)

        return hook

    callbacks = [
        make("r1", on_probe_error=record(raising(first))),
        make("a", on_probe_error=dispatch.hook(record(lambda f, ctx: replaced))),
        make("r2", on_probe_error=dispatch.hook(record(raising(Boom("second"))))),
        make("b", on_probe_error=record(lambda f, ctx: Fallback("fallback"))),
        make("c", on_probe_error=record(lambda f, ctx: Fallback("never"))),
    ]
    with pytest.raises(Boom) as excinfo:
        dispatch.on_error(
            callbacks, ON_ERROR, start, 1, policy=DispatchPolicy(continue_on_error=True)
        )
    assert excinfo.value is first
    assert [id(f) for f in seen] == [id(start), id(start), id(replaced), id(replaced)]


@which_point
@pytest.mark.parametrize(
    "policy",
    [
        DispatchPolicy(continue_on_error=True),
        DispatchPolicy(continue_on_halt=True),
        DispatchPolicy(continue_on_halt=True, continue_on_error=True),
    ],
    ids=repr,
)
def test_policies_without_errors_or_halts_give_the_default_result(
    dispatch: Dispatch, make: Make, which: str, policy: DispatchPolicy
) -> None:
    """With nothing raised and nothing halted, every policy gives the default policy's result."""
    steps: dict[str, Fn] = {
        "before": lambda ctx: Cont(ctx + 1),
        "after": lambda o, ctx: Success(o.unwrap() + 1),
        "error": lambda f, ctx: Failure(KeyError(f.failure().args)),
    }
    callbacks = [
        make("a", **{HOOK[which]: dispatch.hook(steps[which])}),
        make("b", **{HOOK[which]: steps[which]}),
    ]
    expected = dispatch.probe(which, callbacks)
    got = dispatch.probe(which, callbacks, policy)
    if which == "error":  # fresh KeyErrors never compare equal; compare what they carry
        assert isinstance(expected, Failure)
        assert isinstance(got, Failure)
        assert got.failure().args == expected.failure().args
    else:
        assert got == expected


@which_point
def test_default_policy_stops_at_the_first_exception(
    dispatch: Dispatch, make: Make, which: str
) -> None:
    """Without ``continue_on_error`` nothing runs after a raising callback, on the policy path."""
    log: list[str] = []
    callbacks = [
        make("r", **{HOOK[which]: dispatch.hook(rec(log, "r", raising(Boom())))}),
        make("b", **{HOOK[which]: rec(log, "b", passing)}),
    ]
    with pytest.raises(Boom):
        dispatch.probe(which, callbacks, DispatchPolicy(continue_on_halt=True))
    assert log == ["r"]


def test_dispatch_policy_defaults_and_is_frozen() -> None:
    """``DispatchPolicy()`` continues on neither, compares by value and cannot be changed."""
    policy = DispatchPolicy()
    assert (policy.continue_on_halt, policy.continue_on_error) == (False, False)
    assert policy == DispatchPolicy(continue_on_halt=False, continue_on_error=False)
    with pytest.raises(AttributeError):
        policy.continue_on_halt = True  # type: ignore[misc]


def test_a_policy_equal_to_the_default_is_the_default_object() -> None:
    """``DispatchPolicy()`` however it is made -- built, copied, unpickled, replaced -- is one
    object; a policy with a flag set is a new one each time and keeps its flags through a copy."""
    policy = DispatchPolicy()
    halting = DispatchPolicy(continue_on_halt=True)
    assert policy is DispatchPolicy(continue_on_halt=False, continue_on_error=False)
    assert copy.copy(policy) is policy
    assert copy.deepcopy(policy) is policy
    assert pickle.loads(pickle.dumps(policy)) is policy
    assert dataclasses.replace(halting, continue_on_halt=False) is policy
    assert halting is not DispatchPolicy(continue_on_halt=True)
    assert pickle.loads(pickle.dumps(halting)) == halting
    assert copy.deepcopy(DispatchPolicy(continue_on_error=True)).continue_on_error
    assert (policy.continue_on_halt, policy.continue_on_error) == (False, False)


@which_point
def test_a_policy_equal_to_the_default_dispatches_as_the_default(
    dispatch: Dispatch, make: Make, which: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dispatch given a new ``DispatchPolicy()`` takes the default's fast path: once the
    chain is built, it looks the chain up no more than a dispatch given no policy."""
    compiled = compile_callbacks([make("a", **{HOOK[which]: passing})])
    dispatch.probe(which, compiled)  # builds the chain
    lookups: list[str] = []
    for name in ("chain", "sync_chain"):
        original = getattr(CompiledCallbacks, name)

        def counting(self: object, *args: Any, _original: Any = original, _name: str = name) -> Any:
            lookups.append(_name)
            return _original(self, *args)

        monkeypatch.setattr(CompiledCallbacks, name, counting)
    for policy in (None, DispatchPolicy(), DispatchPolicy(False, False)):
        dispatch.probe(which, compiled, policy)
    assert lookups == []
    dispatch.probe(which, compiled, DispatchPolicy(continue_on_error=True))
    assert lookups  # the general path builds on the chain: the count sees it


# -- sync refuses async callbacks; async awaits them -----------------------------------


@which_point
@pytest.mark.parametrize("policy", [None, DispatchPolicy()], ids=["default", "policy"])
def test_sync_dispatch_refuses_async_callbacks_before_any_runs(
    make: Make, kind: str, which: str, policy: DispatchPolicy | None
) -> None:
    """Sync dispatch of a chain with an ``async def`` method raises InvalidCallbacks, and no
    callback of the chain has run."""
    log: list[str] = []

    async def async_hook(*args: Any) -> Any:
        log.append("async")
        return passing(*args)

    slow = make("slow", **{HOOK[which]: async_hook})
    callbacks = [make("first", **{HOOK[which]: rec(log, "first", passing)}), slow]
    with pytest.raises(InvalidCallbacks, match="async") as excinfo:
        Dispatch("sync").probe(which, callbacks, policy)
    assert log == []
    assert excinfo.value.callback is slow
    assert excinfo.value.attribute == HOOK[which]
    assert described(kind, "slow") in str(excinfo.value)


@which_point
def test_async_dispatch_awaits_async_hooks_and_calls_plain_ones(make: Make, which: str) -> None:
    """Async dispatch awaits ``async def`` methods and calls plain ones, all in list order."""
    log: list[str] = []

    async def awaited(*args: Any) -> Any:
        log.append("async start")
        await asyncio.sleep(0)
        log.append("async end")
        return passing(*args)

    callbacks = [
        make("a", **{HOOK[which]: rec(log, "plain a", passing)}),
        make("b", **{HOOK[which]: awaited}),
        make("c", **{HOOK[which]: rec(log, "plain c", passing)}),
    ]
    Dispatch("async").probe(which, callbacks)
    assert log == ["plain a", "async start", "async end", "plain c"]


def test_async_dispatch_uses_the_awaited_result(make: Make) -> None:
    """The chain goes on with what an ``async def`` hook returns, not with its coroutine."""

    async def add(ctx: int) -> Cont[int]:
        await asyncio.sleep(0)
        return Cont(ctx + 1)

    callbacks = [make("a", before_probe=add), make("b", before_probe=lambda ctx: Cont(ctx * 2))]
    assert asyncio.run(arun_before(callbacks, BEFORE, 1)) == Cont(4)


class AsyncCallable:
    """An object whose ``__call__`` is ``async def``."""

    async def __call__(self, ctx: int) -> Cont[int]:
        await asyncio.sleep(0)
        return Cont(ctx + 100)


def test_an_async_callable_object_counts_as_async() -> None:
    """A hook attribute that is an object with ``async def __call__`` is awaited by async
    dispatch and refused by sync dispatch."""
    callbacks = [make_module("obj", before_probe=AsyncCallable())]
    assert asyncio.run(arun_before(callbacks, BEFORE, 1)) == Cont(101)
    with pytest.raises(InvalidCallbacks, match="async"):
        run_before(callbacks, BEFORE, 1)


def test_whether_a_method_is_async_is_decided_once() -> None:
    """A compiled list keeps the methods its chain found: replacing one afterwards changes
    nothing."""

    class Guard:
        def before_probe(self, ctx: int, /) -> Cont[int]:
            return Cont(ctx + 1)

    guard = Guard()
    compiled = compile_callbacks([guard])
    methods = compiled.methods(BEFORE)

    async def replacement(ctx: int) -> Cont[int]:
        return Cont(-1)

    guard.before_probe = replacement  # type: ignore[method-assign,assignment]
    assert run_before(compiled, BEFORE, 1) == Cont(2)
    assert compiled.methods(BEFORE) == methods


# -- registration is validated once per list -------------------------------------------


@pytest.mark.parametrize(
    ("attribute", "suggestion"),
    [
        ("before_modle", "before_model"),
        ("befor_model", "before_model"),
        ("after_tol", "after_tool"),
        ("on_model_eror", "on_model_error"),
        ("before_agnet", "before_agent"),
        ("on_evnet", "on_event"),
        ("before_prob", "before_probe"),
    ],
)
def test_misspelled_hook_name_is_refused_with_a_hint(
    dispatch: Dispatch, make: Make, kind: str, attribute: str, suggestion: str
) -> None:
    """A method named close to a known point raises InvalidCallbacks with a did-you-mean hint,
    before any callback runs."""
    log: list[str] = []
    bad = make("typo", **{attribute: passing})
    callbacks = [make("first", before_probe=rec(log, "first", passing)), bad]
    with pytest.raises(InvalidCallbacks) as excinfo:
        dispatch.before(callbacks, BEFORE, 1)
    assert f"did you mean {suggestion!r}" in str(excinfo.value)
    assert repr(attribute) in str(excinfo.value)
    assert described(kind, "typo") in str(excinfo.value)
    assert excinfo.value.callback is bad
    assert excinfo.value.attribute == attribute
    assert log == []


@pytest.mark.parametrize(
    "attribute", ["model", "before", "all_after", "retry_count", "model_on", "handle_error"]
)
def test_names_far_from_any_point_are_allowed(make: Make, attribute: str) -> None:
    """Attributes that are not close to a point's name, nor hook-shaped, are left alone."""
    callbacks = [make("helpers", **{attribute: passing}, before_probe=lambda ctx: Cont(ctx + 1))]
    assert run_before(callbacks, BEFORE, 1) == Cont(2)


def test_declaring_a_point_makes_its_name_known(make: Make) -> None:
    """A near miss of a name nobody declared is fine; once the point is declared it is refused."""
    name = f"before_{uuid.uuid4().hex[:24]}"  # long: never close to another test's name
    near_miss = name[:-1]  # one letter short: close, and never the name itself
    assert compile_callbacks([make("early", **{near_miss: passing})])
    BeforePoint(name)
    with pytest.raises(InvalidCallbacks, match=f"did you mean {name!r}"):
        compile_callbacks([make("late", **{near_miss: passing})])


def test_before_fetch_makes_before_fecth_a_misspelling(dispatch: Dispatch, make: Make) -> None:
    """After ``BeforePoint("before_fetch")``, a ``before_fecth`` method is refused."""
    fetch: BeforePoint[int, str] = BeforePoint("before_fetch")
    callbacks = [make("fetcher", before_fecth=passing)]
    with pytest.raises(InvalidCallbacks, match="did you mean 'before_fetch'"):
        dispatch.before(callbacks, fetch, 1)


@pytest.mark.parametrize("value", [42, "text", None, 1.5, ("tuple",)], ids=repr)
def test_non_callable_hook_attribute_is_refused(
    dispatch: Dispatch, make: Make, kind: str, value: object
) -> None:
    """A hook attribute that is not callable raises InvalidCallbacks saying what it should take."""
    bad = make("broken", before_probe=value)
    with pytest.raises(InvalidCallbacks) as excinfo:
        dispatch.before([bad], BEFORE, 1)
    message = str(excinfo.value)
    assert "(ctx)" in message
    assert type(value).__name__ in message
    assert described(kind, "broken") in message
    assert excinfo.value.callback is bad
    assert excinfo.value.attribute == "before_probe"


def _no_args() -> None: ...
def _two_args(a: object, b: object) -> None: ...
def _one_arg(a: object) -> None: ...
def _three_args(a: object, b: object, c: object) -> None: ...
def _keyword_only(*, ctx: object) -> None: ...


@pytest.mark.parametrize(
    ("attribute", "fn", "call"),
    [
        ("before_probe", _no_args, "before_probe(ctx)"),
        ("before_probe", _two_args, "before_probe(ctx)"),
        ("before_probe", _keyword_only, "before_probe(ctx)"),
        ("after_probe", _one_arg, "after_probe(outcome, ctx)"),
        ("after_probe", _three_args, "after_probe(outcome, ctx)"),
        ("on_probe_error", _one_arg, "on_probe_error(failure, ctx)"),
        ("on_event", _two_args, "on_event(event)"),
    ],
)
def test_method_of_the_wrong_arity_is_refused(
    make: Make, kind: str, attribute: str, fn: Fn, call: str
) -> None:
    """A method that cannot take its point's arguments raises InvalidCallbacks showing the call."""
    bad = make("arity", **{attribute: fn})
    with pytest.raises(InvalidCallbacks) as excinfo:
        compile_callbacks([bad])
    assert f"cannot be called as {call}" in str(excinfo.value)
    assert described(kind, "arity") in str(excinfo.value)
    assert excinfo.value.attribute == attribute


def _flexible(ctx: object, extra: object = None, *more: object, flag: bool = False) -> Cont[int]:
    return Cont(7)


def _star(*args: object) -> Cont[int]:
    return Cont(8)


@pytest.mark.parametrize(("fn", "expected"), [(_flexible, Cont(7)), (_star, Cont(8))])
def test_methods_taking_more_optional_arguments_are_accepted(
    make: Make, fn: Fn, expected: Cont[int]
) -> None:
    """Extra parameters with defaults, ``*args`` and optional keywords are accepted."""
    assert run_before([make("flex", before_probe=fn)], BEFORE, 1) == expected


class Guard:
    """A callback class."""

    def before_probe(self, ctx: int, /) -> Cont[int]:
        return Cont(ctx)


def test_class_instead_of_an_instance_is_refused(dispatch: Dispatch) -> None:
    """Passing a class where a callback is needed raises InvalidCallbacks asking for an instance."""
    with pytest.raises(InvalidCallbacks, match="pass an instance") as excinfo:
        dispatch.before([Guard], BEFORE, 1)
    assert "Guard()" in str(excinfo.value)
    assert "class Guard" in str(excinfo.value)
    assert excinfo.value.callback is Guard


def _bare(ctx: int) -> Cont[int]:
    return Cont(ctx)


@pytest.mark.parametrize(
    "entry",
    [
        _bare,
        lambda ctx: Cont(ctx + 1),
        len,
        Guard().before_probe,
        None,
        "before_probe",
        b"x",
        3,
        1.5,
    ],
    ids=["function", "lambda", "builtin", "bound method", "None", "str", "bytes", "int", "float"],
)
def test_non_callback_entries_are_refused(dispatch: Dispatch, entry: object) -> None:
    """A bare function (or another non-callback value) in the list raises InvalidCallbacks."""
    with pytest.raises(InvalidCallbacks, match="a callback is a module or an object") as excinfo:
        dispatch.before([entry], BEFORE, 1)
    assert excinfo.value.callback is entry


@pytest.mark.parametrize(
    "callbacks",
    [
        make_module("alone", before_probe=passing),
        Guard(),
        "before_probe",
        b"bytes",
        {"a": Guard()},
        {Guard()},
        None,
        iter([Guard()]),
    ],
    ids=["module", "instance", "str", "bytes", "dict", "set", "None", "iterator"],
)
def test_callbacks_that_are_not_a_sequence_are_refused(
    dispatch: Dispatch, callbacks: object
) -> None:
    """Anything but a list or tuple (a lone module, a str, ...) raises InvalidCallbacks."""
    not_a_list: Any = callbacks
    with pytest.raises(InvalidCallbacks, match="list or tuple") as excinfo:
        dispatch.before(not_a_list, BEFORE, 1)
    assert excinfo.value.callback is callbacks


class CountingDir:
    """A callback that counts how often its attributes are listed (that is, validated)."""

    def __init__(self) -> None:
        self.listed = 0

    def __dir__(self) -> list[str]:
        self.listed += 1
        return list(super().__dir__())

    def before_probe(self, ctx: int, /) -> Cont[int]:
        return Cont(ctx + 1)


def test_a_list_is_validated_once(dispatch: Dispatch) -> None:
    """Dispatching the same unchanged list again does not validate it again (its names are
    listed when it is compiled and when its first dispatch starts, then never)."""
    callback = CountingDir()
    callbacks: list[object] = [callback]
    for _ in range(3):
        assert dispatch.before(callbacks, BEFORE, 1) == Cont(2)
        dispatch.after(callbacks, AFTER, Success(1), 1)
    assert callback.listed == 2
    callbacks.append(make_module("extra", on_event=listening))
    dispatch.before(callbacks, BEFORE, 1)
    assert callback.listed == 4


def test_a_compiled_list_is_validated_once(dispatch: Dispatch) -> None:
    """Building the compiled form validates, its first dispatch checks its names; dispatching
    it never does either again."""
    callback = CountingDir()
    compiled = compile_callbacks([callback])
    assert callback.listed == 1
    for _ in range(3):
        assert dispatch.before(compiled, BEFORE, 1) == Cont(2)
    assert callback.listed == 2


# -- InvalidResult ---------------------------------------------------------------------


@which_point
@pytest.mark.parametrize(
    "policy", [None, DispatchPolicy(continue_on_halt=True)], ids=["fast", "policy"]
)
def test_none_is_an_invalid_result(
    dispatch: Dispatch, make: Make, kind: str, which: str, policy: DispatchPolicy | None
) -> None:
    """A hook returning None raises InvalidResult naming callback, point, allowed tags and type,
    and stops the chain."""
    log: list[str] = []
    lazy = make("lazy", **{HOOK[which]: dispatch.hook(rec(log, "lazy", lambda *args: None))})
    callbacks = [lazy, make("after", **{HOOK[which]: rec(log, "after", passing)})]
    with pytest.raises(InvalidResult) as excinfo:
        dispatch.probe(which, callbacks, policy)
    err = excinfo.value
    assert (err.callback, err.point, err.value, err.expected) == (
        lazy,
        HOOK[which],
        None,
        EXPECTED_TAGS[which],
    )
    message = str(err)
    assert described(kind, "lazy") in message
    assert HOOK[which] in message
    assert "NoneType" in message
    assert " or ".join(EXPECTED_TAGS[which]) in message
    assert log == ["lazy"]


@pytest.mark.parametrize(
    ("which", "value"),
    [
        ("before", Retry(1)),
        ("before", Fallback("x")),
        ("before", Success(1)),
        ("before", Failure(Boom())),
        ("before", "text"),
        ("before", (Cont(1),)),
        ("after", Cont(1)),
        ("after", Halt("x")),
        ("after", Retry(1)),
        ("after", Failure("not an exception")),
        ("after", Failure(KeyboardInterrupt())),
        ("after", 5),
        ("error", Cont(1)),
        ("error", Halt("x")),
        ("error", Success(1)),
        ("error", Failure("not an exception")),
        ("error", Failure(SystemExit())),
    ],
    ids=repr,
)
def test_a_wrong_tag_is_an_invalid_result(
    dispatch: Dispatch, make: Make, which: str, value: object
) -> None:
    """A result of a tag the point does not allow raises InvalidResult carrying it."""
    bad = make("wrong", **{HOOK[which]: dispatch.hook(lambda *args: value)})
    with pytest.raises(InvalidResult) as excinfo:
        dispatch.probe(which, [make("ok", **{HOOK[which]: passing}), bad])
    assert excinfo.value.value is value
    assert excinfo.value.callback is bad
    assert excinfo.value.expected == EXPECTED_TAGS[which]
    assert type(value).__name__ in str(excinfo.value)


@which_point
def test_a_plain_def_returning_a_coroutine_is_invalid_and_the_coroutine_closed(
    dispatch: Dispatch, make: Make, which: str
) -> None:
    """A plain def that returns a coroutine raises InvalidResult, and the coroutine is closed
    (no "never awaited" warning escapes)."""

    async def result(*args: Any) -> Any:
        return passing(*args)

    def forgot_async(*args: Any) -> Coroutine[Any, Any, Any]:
        return result(*args)

    callbacks = [
        make("first", **{HOOK[which]: dispatch.hook(passing)}),
        make("forgot", **{HOOK[which]: forgot_async}),
    ]
    with pytest.raises(InvalidResult, match="coroutine") as excinfo:
        dispatch.probe(which, callbacks)
    coroutine = excinfo.value.value
    assert inspect.iscoroutine(coroutine)
    assert inspect.getcoroutinestate(coroutine) == inspect.CORO_CLOSED


def test_an_async_hook_returning_none_is_invalid(make: Make) -> None:
    """An ``async def`` hook whose awaited value is None raises InvalidResult."""

    async def lazy(ctx: int) -> None:
        await asyncio.sleep(0)

    with pytest.raises(InvalidResult, match="NoneType"):
        asyncio.run(arun_before([make("lazy", before_probe=lazy)], BEFORE, 1))


def test_invalid_result_message_truncates_a_long_value(make: Make) -> None:
    """The message shows the start of a huge returned value, not all of it."""
    huge = "x" * 10_000
    with pytest.raises(InvalidResult) as excinfo:
        run_before([make("huge", before_probe=lambda ctx: huge)], BEFORE, 1)
    assert "xxxxx" in str(excinfo.value)
    assert len(str(excinfo.value)) < 300


# -- the compiled form -----------------------------------------------------------------


def test_compiled_form_dispatches_like_the_list(dispatch: Dispatch, make: Make) -> None:
    """``compile_callbacks(list)`` can be passed wherever the list goes, with the same results."""
    callbacks = [
        make(
            "a",
            before_probe=dispatch.hook(lambda ctx: Cont(ctx + 1)),
            after_probe=lambda o, ctx: Success(o.unwrap() * 2),
            on_probe_error=dispatch.hook(lambda f, ctx: Fallback("saved")),
        ),
        make("b", before_probe=lambda ctx: Cont(ctx * 10)),
    ]
    compiled = compile_callbacks(callbacks)
    assert dispatch.before(compiled, BEFORE, 1) == dispatch.before(callbacks, BEFORE, 1) == Cont(20)
    assert dispatch.after(compiled, AFTER, Success(3), 1) == Success(6)
    assert dispatch.on_error(compiled, ON_ERROR, Failure(Boom()), 1) == Fallback("saved")


def test_compile_callbacks_of_a_compiled_form_is_that_form() -> None:
    """Compiling a compiled form returns it unchanged."""
    compiled = compile_callbacks([Guard()])
    assert compile_callbacks(compiled) is compiled


def test_compile_callbacks_accepts_a_tuple() -> None:
    """A tuple compiles like a list, and the compiled form keeps the callbacks in order."""
    first, second = Guard(), make_module("m", on_event=listening)
    compiled = compile_callbacks((first, second))
    assert compiled.callbacks == (first, second)
    assert len(compiled) == 2


def test_methods_lists_the_points_methods_in_order(make: Make) -> None:
    """``methods(point)`` is the tuple of the point's methods in list order, skipping callbacks
    without it."""

    def first_hook(ctx: int) -> Cont[int]:
        return Cont(ctx)

    def third_hook(ctx: int) -> Cont[int]:
        return Cont(ctx)

    first = make("first", before_probe=first_hook)
    third = make("third", before_probe=third_hook)
    compiled = compile_callbacks([first, make("second", after_probe=passing), third])
    methods = compiled.methods(BEFORE)
    name = BEFORE.name
    assert methods == (getattr(first, name), getattr(third, name))
    assert [method(5) for method in methods] == [Cont(5), Cont(5)]
    assert compiled.methods(ON_ERROR) == ()


def test_defines_tells_whether_any_callback_has_the_method(make: Make) -> None:
    """``defines(point)`` is true exactly when some callback defines the point's method."""
    compiled = compile_callbacks([make("a", before_probe=passing), make("b", on_event=listening)])
    assert compiled.defines(BEFORE)
    assert not compiled.defines(AFTER)
    assert not compiled.defines(ON_ERROR)
    assert not compiled.defines(BEFORE_MODEL)


def test_methods_of_a_point_declared_after_compiling(make: Make) -> None:
    """A point declared after the list was compiled still finds (and validates) its methods."""
    name = f"before_late_{uuid.uuid4().hex}"  # long and random: close to no other point
    callback = make("late", **{name: lambda ctx: Cont(ctx + 1)})
    compiled = compile_callbacks([callback])
    point: BeforePoint[int, str] = BeforePoint(name)
    assert compiled.defines(point)
    assert run_before(compiled, point, 1) == Cont(2)


def test_observers_are_the_on_event_methods_in_order(make: Make) -> None:
    """The ``on_event`` chain holds each callback's ``on_event`` method, in list order."""
    events: list[str] = []
    callbacks = [
        observing(lambda event: events.append("first")),
        make("silent", before_probe=passing),
        make("second", on_event=lambda event: events.append("second")),
    ]
    observers = compile_callbacks(callbacks).chain("on_event", "event").fns
    assert len(observers) == 2
    for observer in observers:
        observer(object())
    assert events == ["first", "second"]


def test_compiled_form_is_a_snapshot_of_the_list(make: Make) -> None:
    """Changing the list after compiling it does not change the compiled form."""
    callbacks = [make("a", before_probe=lambda ctx: Cont(ctx + 1))]
    compiled = compile_callbacks(callbacks)
    callbacks.append(make("b", before_probe=lambda ctx: Cont(ctx * 10)))
    assert len(compiled) == 1
    assert run_before(compiled, BEFORE, 1) == Cont(2)


def test_compile_callbacks_validates_eagerly() -> None:
    """``compile_callbacks`` itself raises for an invalid list, before any dispatch."""
    with pytest.raises(InvalidCallbacks, match="pass an instance"):
        compile_callbacks([Guard])


def test_compiled_repr_shows_the_callbacks() -> None:
    """The compiled form's repr is the call that built it."""
    module = make_module("shown", on_event=listening)
    assert repr(compile_callbacks([module])) == f"compile_callbacks([{module!r}])"


# -- the free functions' identity cache ------------------------------------------------


@pytest.mark.parametrize("change", ["append", "replace", "remove", "insert"])
def test_changing_a_list_after_a_dispatch_is_seen_by_the_next(
    dispatch: Dispatch, make: Make, change: str
) -> None:
    """Appending, replacing, removing or inserting callbacks in a dispatched list takes effect
    at the next dispatch."""
    log: list[str] = []
    callbacks = [
        make("a", before_probe=rec(log, "a", passing)),
        make("b", before_probe=dispatch.hook(rec(log, "b", passing))),
    ]
    dispatch.before(callbacks, BEFORE, 1)
    new = make("new", before_probe=dispatch.hook(rec(log, "new", passing)))
    if change == "append":
        callbacks.append(new)
        expected = ["a", "b", "new"]
    elif change == "replace":
        callbacks[0] = new
        expected = ["new", "b"]
    elif change == "remove":
        del callbacks[0]
        expected = ["b"]
    else:
        callbacks.insert(1, new)
        expected = ["a", "new", "b"]
    log.clear()
    dispatch.before(callbacks, BEFORE, 1)
    assert log == expected


def test_appending_an_invalid_callback_after_a_dispatch_is_refused(
    dispatch: Dispatch, make: Make
) -> None:
    """A list that was valid when first dispatched is validated again once it changes."""
    callbacks: list[object] = [make("a", before_probe=passing)]
    dispatch.before(callbacks, BEFORE, 1)
    callbacks.append(Guard)
    with pytest.raises(InvalidCallbacks, match="pass an instance"):
        dispatch.before(callbacks, BEFORE, 1)


def test_a_tuple_of_callbacks_dispatches(dispatch: Dispatch, make: Make) -> None:
    """A tuple works wherever a list does, repeatedly."""
    callbacks = (
        make("a", before_probe=dispatch.hook(lambda ctx: Cont(ctx + 1))),
        make("b", before_probe=lambda ctx: Cont(ctx * 2)),
    )
    for _ in range(2):
        assert dispatch.before(callbacks, BEFORE, 1) == Cont(4)


def test_equal_but_distinct_lists_are_compiled_separately(dispatch: Dispatch, make: Make) -> None:
    """Two list objects are dispatched by their own contents, never by another list's."""
    a = make("a", before_probe=lambda ctx: Cont(ctx + 1))
    b = make("b", before_probe=lambda ctx: Cont(ctx * 10))
    assert dispatch.before([a, b], BEFORE, 1) == Cont(20)
    assert dispatch.before([b, a], BEFORE, 1) == Cont(11)


# -- custom points ---------------------------------------------------------------------


def test_custom_points_dispatch_with_the_same_functions(dispatch: Dispatch, make: Make) -> None:
    """User-declared points dispatch through ``run_before``, ``run_after`` and ``run_on_error``."""
    before_fetch: BeforePoint[str, list[str]] = BeforePoint("before_fetch")
    after_fetch: AfterPoint[str, list[str]] = AfterPoint("after_fetch")
    on_fetch_error: ErrorPoint[str, list[str]] = ErrorPoint("on_fetch_error")
    retriever = make(
        "retriever",
        before_fetch=dispatch.hook(lambda query: Cont(query.upper())),
        after_fetch=lambda docs, query: Success([*docs.unwrap(), query]),
        on_fetch_error=dispatch.hook(lambda failure, query: Fallback([f"cached {query}"])),
    )
    assert dispatch.before([retriever], before_fetch, "q") == Cont("Q")
    assert dispatch.after([retriever], after_fetch, Success(["d"]), "q") == Success(["d", "q"])
    assert dispatch.on_error([retriever], on_fetch_error, Failure(Boom()), "q") == Fallback(
        ["cached q"]
    )


def test_none_method_for_a_late_point_is_refused(make: Make) -> None:
    """A hook attribute set to None is refused for a point declared after compiling too."""
    name = f"before_late_none_{uuid.uuid4().hex}"
    compiled = compile_callbacks([make("off", **{name: None})])
    point: BeforePoint[int, str] = BeforePoint(name)
    with pytest.raises(InvalidCallbacks, match="must be a method"):
        run_before(compiled, point, 1)


def test_compiled_lists_concatenate_in_order(make: Make) -> None:
    """``a + b`` dispatches a's callbacks then b's, without validating either again."""
    calls: list[str] = []

    def step(label: str) -> Any:
        def before_probe(ctx: int) -> Cont[int]:
            calls.append(label)
            return Cont(ctx + 1)

        return before_probe

    first = compile_callbacks([make("a", before_probe=step("a"))])
    second = compile_callbacks([make("b", before_probe=step("b")), make("c", on_event=listening)])
    combined = first + second
    assert len(combined) == 3
    assert combined.callbacks == first.callbacks + second.callbacks
    assert run_before(combined, BEFORE, 0) == Cont(2)
    assert calls == ["a", "b"]


def test_concatenation_keeps_async_methods_out_of_sync_dispatch(make: Make) -> None:
    """An async method in either half still makes sync dispatch of the sum refuse to run."""

    async def before_probe(ctx: int) -> Cont[int]:
        return Cont(ctx)

    combined = compile_callbacks([make("plain", on_event=listening)]) + compile_callbacks(
        [make("slow", before_probe=before_probe)]
    )
    with pytest.raises(InvalidCallbacks, match="async"):
        run_before(combined, BEFORE, 0)
    assert asyncio.run(arun_before(combined, BEFORE, 0)) == Cont(0)


@pytest.mark.parametrize("nested", [[], (), {}, set(), frozenset()], ids=type)
def test_a_nested_collection_is_refused(nested: object) -> None:
    """A list (or other collection) inside the callbacks list is refused, with a hint to flatten."""
    with pytest.raises(InvalidCallbacks, match="flatten"):
        compile_callbacks([nested])


def test_a_misspelling_of_a_point_declared_after_compiling_is_refused(make: Make) -> None:
    """A misspelling is refused for points declared after the list was compiled too."""
    name = f"before_late_{uuid.uuid4().hex}"
    compiled = compile_callbacks([make("early", **{name[:-1]: passing})])
    point: BeforePoint[int, str] = BeforePoint(name)
    with pytest.raises(InvalidCallbacks, match=f"did you mean {name!r}"):
        run_before(compiled, point, 1)


def test_continue_on_error_keeps_the_first_error_over_a_later_bad_result(
    dispatch: Dispatch, make: Make
) -> None:
    """Under ``continue_on_error`` an illegal result waits like an error; the first error wins."""
    boom = ValueError("first")

    def raising(ctx: int) -> Cont[int]:
        raise boom

    callbacks = [
        make("boom", before_probe=dispatch.hook(raising)),
        make("bad", before_probe=dispatch.hook(lambda ctx: None)),
    ]
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(ValueError, match="first"):
        dispatch.before(callbacks, BEFORE, 1, policy=policy)
    with pytest.raises(InvalidResult, match="returned NoneType"):
        dispatch.before(callbacks[1:], BEFORE, 1, policy=policy)
