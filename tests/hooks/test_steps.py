"""Tests for what every dispatch path shares: traces, policies, and errors from callbacks.

``hooks._steps`` is the general path (a policy, a trace, async methods); the fast loops
of ``hooks._dispatch`` must agree with it. Tests run sync and async (``dispatch``) and,
where both paths apply, fast and traced (``trace``).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, replace
from typing import Any

import pytest
from returns.result import Failure, Success

import hooks._adispatch
import hooks._compile
import hooks._dispatch
from hooks import (
    BeforePoint,
    Cont,
    DispatchPolicy,
    Fallback,
    Halt,
    InvalidCallbacks,
    InvalidResult,
    Retry,
    Trace,
    arun_before,
    compile_callbacks,
    run_after,
    run_before,
    run_on_error,
)
from tests.helpers.dispatch import (
    AFTER,
    BEFORE,
    HOOK,
    ON_ERROR,
    Boom,
    Dispatch,
    listening,
    make_instance,
    make_module,
    passing,
    raising,
)

which_point = pytest.mark.parametrize("which", ["before", "after", "error"])


def module(name: str, **hooks: object) -> object:
    """A module callback."""
    return make_module(name, **hooks)


# -- Trace: which callback decided ---------------------------------------------------


def test_trace_names_the_halting_callback(dispatch: Dispatch) -> None:
    """Before: the callback whose ``Halt`` was returned decides."""
    halter = module("halter", before_probe=dispatch.hook(lambda ctx: Halt("no")))
    callbacks = [module("changer", before_probe=lambda ctx: Cont(ctx + 1)), halter]
    trace = Trace()
    assert dispatch.before(callbacks, BEFORE, 1, trace=trace) == Halt("no")
    assert trace.callback is halter


def test_trace_names_the_last_halt_under_continue_on_halt(dispatch: Dispatch) -> None:
    """Under ``continue_on_halt`` the callback of the last ``Halt`` decides."""
    first = module("first", before_probe=lambda ctx: Halt("first"))
    last = module("last", before_probe=dispatch.hook(lambda ctx: Halt("last")))
    callbacks = [first, last, module("after", before_probe=lambda ctx: Cont(ctx + 1))]
    trace = Trace()
    policy = DispatchPolicy(continue_on_halt=True)
    assert dispatch.before(callbacks, BEFORE, 1, policy=policy, trace=trace) == Halt("last")
    assert trace.callback is last


def test_trace_names_the_last_callback_that_replaced_the_context(dispatch: Dispatch) -> None:
    """Before, without a Halt: the last callback whose ``Cont`` carried another object decides."""
    replacer = module("replacer", before_probe=dispatch.hook(lambda ctx: Cont(ctx + 1)))
    keeper = module("keeper", before_probe=passing)
    trace = Trace()
    assert dispatch.before([keeper, replacer, keeper], BEFORE, 1, trace=trace) == Cont(2)
    assert trace.callback is replacer
    assert dispatch.before([keeper, keeper], BEFORE, 1, trace=trace) == Cont(1)
    assert trace.callback is None


def test_trace_names_the_last_callback_that_changed_the_outcome(dispatch: Dispatch) -> None:
    """After: the last callback whose result was not the very outcome it got decides."""
    changer = module("changer", after_probe=dispatch.hook(lambda o, ctx: Success(o.unwrap() + 1)))
    keeper = module("keeper", after_probe=passing)
    trace = Trace()
    assert dispatch.after([changer, keeper], AFTER, Success(1), 1, trace=trace) == Success(2)
    assert trace.callback is changer
    dispatch.after([keeper], AFTER, Success(1), 1, trace=trace)
    assert trace.callback is None


@dataclass(frozen=True)
class Box:
    """A context or value compared by what it holds: a copy is equal, not the same object."""

    value: int


def test_trace_names_no_callback_for_an_equal_new_context(dispatch: Dispatch) -> None:
    """Before: a ``Cont`` carrying a new object equal to the context replaced nothing (as a
    ``replace(ctx)`` that changed no field); the next callback gets that object."""
    got: list[object] = []

    def record(ctx: Box) -> Any:
        got.append(ctx)
        return Cont(ctx)

    copier = module("copier", before_probe=dispatch.hook(lambda ctx: Cont(replace(ctx))))
    changer = module("changer", before_probe=dispatch.hook(lambda ctx: Cont(Box(ctx.value + 1))))
    recorder = module("recorder", before_probe=record)
    given: Any = Box(1)  # an untyped context at the int probe point
    trace = Trace()
    assert dispatch.before([copier, recorder], BEFORE, given, trace=trace) == Cont(given)
    assert trace.callback is None
    assert got == [given]
    assert got[0] is not given
    assert dispatch.before([changer, copier], BEFORE, given, trace=trace) == Cont(Box(2))
    assert trace.callback is changer


def test_trace_names_no_callback_for_an_equal_new_outcome(dispatch: Dispatch) -> None:
    """After: ``Success`` of an equal value, made anew, replaced nothing."""
    copier = module("copier", after_probe=dispatch.hook(lambda o, ctx: Success(o.unwrap())))
    changer = module("changer", after_probe=dispatch.hook(lambda o, ctx: Success(o.unwrap() + 1)))
    trace = Trace()
    assert dispatch.after([copier], AFTER, Success(1), 1, trace=trace) == Success(1)
    assert trace.callback is None
    assert dispatch.after([changer, copier], AFTER, Success(1), 1, trace=trace) == Success(2)
    assert trace.callback is changer


def test_trace_names_no_callback_for_an_equal_new_failure(dispatch: Dispatch) -> None:
    """Error: a new ``Failure`` of the very same exception replaced nothing."""
    copier = module("copier", on_probe_error=dispatch.hook(lambda f, ctx: Failure(f.failure())))
    failure: Failure[Exception] = Failure(Boom())
    trace = Trace()
    assert dispatch.on_error([copier], ON_ERROR, failure, 1, trace=trace) == failure
    assert trace.callback is None


class Touchy:
    """A context whose ``==`` raises, or answers something that is not a bool."""

    def __init__(self, answer: object) -> None:
        self.answer = answer

    def __eq__(self, other: object) -> bool:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer  # type: ignore[return-value]  # hostile on purpose

    __hash__ = object.__hash__


@pytest.mark.parametrize("answer", [Boom("eq"), "yes", 1], ids=repr)
def test_a_context_whose_eq_misbehaves_counts_as_replaced(
    dispatch: Dispatch, answer: object
) -> None:
    """A new context whose ``==`` raises or answers no bool is credited to its callback; the
    dispatch goes on as without a trace."""
    fresh = Touchy(answer)
    changer = module("changer", before_probe=dispatch.hook(lambda ctx: Cont(fresh)))
    trace = Trace()
    given: Any = Touchy(answer)  # an untyped context at the int probe point
    result = dispatch.before([changer], BEFORE, given, trace=trace)
    assert type(result) is Cont
    assert result._ctx is fresh
    assert trace.callback is changer


def test_trace_names_the_recovering_callback(dispatch: Dispatch) -> None:
    """Error: the callback that returned the ``Retry`` or ``Fallback`` decides, else the last
    that replaced the failure."""
    replacer = module("replacer", on_probe_error=lambda f, ctx: Failure(Boom("other")))
    rescuer = module("rescuer", on_probe_error=dispatch.hook(lambda f, ctx: Fallback("saved")))
    keeper = module("keeper", on_probe_error=passing)
    failure: Failure[Exception] = Failure(Boom())
    trace = Trace()
    callbacks = [replacer, rescuer, keeper]
    assert dispatch.on_error(callbacks, ON_ERROR, failure, 1, trace=trace) == Fallback("saved")
    assert trace.callback is rescuer
    dispatch.on_error([keeper, replacer, keeper], ON_ERROR, failure, 1, trace=trace)
    assert trace.callback is replacer
    retrier = module("retrier", on_probe_error=lambda f, ctx: Retry(ctx))
    assert dispatch.on_error([retrier], ON_ERROR, failure, 1, trace=trace) == Retry(1)
    assert trace.callback is retrier


@which_point
def test_trace_names_the_raising_callback(dispatch: Dispatch, which: str) -> None:
    """A callback that raised decides; under ``continue_on_error``, the first one."""
    first = module("first", **{HOOK[which]: dispatch.hook(raising(Boom("first")))})
    second = module("second", **{HOOK[which]: raising(Boom("second"))})
    trace = Trace()
    with pytest.raises(Boom, match="first"):
        dispatch.probe(which, [module("ok", **{HOOK[which]: passing}), first], trace=trace)
    assert trace.callback is first
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(Boom, match="first"):
        dispatch.probe(which, [first, second], policy=policy, trace=trace)
    assert trace.callback is first


@which_point
def test_trace_names_the_callback_of_an_invalid_result(dispatch: Dispatch, which: str) -> None:
    """A callback that returned an illegal result decides."""
    lazy = module("lazy", **{HOOK[which]: dispatch.hook(lambda *args: None)})
    trace = Trace()
    with pytest.raises(InvalidResult):
        dispatch.probe(which, [lazy], trace=trace)
    assert trace.callback is lazy


def stale() -> Trace:
    """A trace still naming a callback from some earlier dispatch."""
    trace = Trace()
    trace.callback = "stale"
    return trace


def test_a_trace_is_reset_by_each_dispatch(dispatch: Dispatch) -> None:
    """A reused trace forgets the previous dispatch's callback, even when dispatch is refused."""
    trace = stale()
    dispatch.before([module("keeper", before_probe=passing)], BEFORE, 1, trace=trace)
    assert trace.callback is None

    async def slow(ctx: int) -> Cont[int]:
        return Cont(ctx)

    trace = stale()
    with pytest.raises(InvalidCallbacks, match="async"):
        run_before([module("slow", before_probe=slow)], BEFORE, 1, trace=trace)
    assert trace.callback is None


def test_trace_description_names_the_callback_as_messages_do() -> None:
    """``description`` is ``describe()`` of the callback, or None."""
    assert Trace().description is None
    trace = Trace()
    trace.callback = module("guards")
    assert trace.description == "module 'guards'"
    trace.callback = make_instance("Guard", on_event=listening)
    assert trace.description == "Guard instance"
    assert repr(trace).startswith("Trace(callback=<")
    assert "Guard object" in repr(trace)


def test_a_trace_holds_nothing_but_the_callback() -> None:
    """A trace is slotted: it carries only ``callback``."""
    with pytest.raises(AttributeError):
        Trace().other = 1  # type: ignore[attr-defined]


# -- the default path is the fast one -----------------------------------------------


@pytest.fixture
def no_general_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the general path fail, so a dispatch that reaches it fails."""

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the general path ran")

    monkeypatch.setattr(hooks._dispatch, "run_steps", refuse)
    monkeypatch.setattr(hooks._adispatch, "arun_steps", refuse)


@pytest.mark.usefixtures("no_general_path")
@pytest.mark.parametrize(
    "policy",
    [None, DispatchPolicy(), DispatchPolicy(continue_on_halt=False, continue_on_error=False)],
    ids=["omitted", "equal", "explicit"],
)
def test_default_dispatch_runs_the_fast_loops(
    dispatch: Dispatch, policy: DispatchPolicy | None
) -> None:
    """Without a trace, a default policy -- the default object or any equal one -- never runs
    the general path, sync or async (for chains without async methods)."""
    callbacks = [module("a", before_probe=passing, after_probe=passing, on_probe_error=passing)]
    assert dispatch.before(callbacks, BEFORE, 1, policy=policy) == Cont(1)
    assert dispatch.after(callbacks, AFTER, Success(1), 1, policy=policy) == Success(1)
    failure: Failure[Exception] = Failure(Boom())
    assert dispatch.on_error(callbacks, ON_ERROR, failure, 1, policy=policy) is failure


@pytest.mark.usefixtures("no_general_path")
@pytest.mark.parametrize(
    ("policy", "trace"),
    [
        (DispatchPolicy(continue_on_halt=True), None),
        (DispatchPolicy(continue_on_error=True), None),
        (None, Trace()),
    ],
    ids=["continue_on_halt", "continue_on_error", "trace"],
)
def test_a_policy_or_a_trace_runs_the_general_path(
    dispatch: Dispatch, policy: DispatchPolicy | None, trace: Trace | None
) -> None:
    """A departing policy or a trace does run the general path (so the test above means it)."""
    with pytest.raises(AssertionError, match="general path"):
        dispatch.before([module("a", before_probe=passing)], BEFORE, 1, policy=policy, trace=trace)


@pytest.mark.usefixtures("no_general_path")
def test_a_dispatched_point_is_one_lookup_away(monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a compiled list has dispatched a point, default sync dispatches of that point
    compile nothing and build or look up no chain: they go straight to its methods."""
    compiled = compile_callbacks(
        [module("a", before_probe=passing, after_probe=passing, on_probe_error=passing)]
    )
    failure: Failure[Exception] = Failure(Boom())

    def dispatch_all() -> None:
        assert run_before(compiled, BEFORE, 1) == Cont(1)
        assert run_after(compiled, AFTER, Success(1), 1) == Success(1)
        assert run_on_error(compiled, ON_ERROR, failure, 1) is failure

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the hot path compiled or looked up a chain")

    dispatch_all()  # builds each point's chain
    for name in ("chain", "sync_chain"):
        monkeypatch.setattr(hooks._compile.CompiledCallbacks, name, refuse)
    monkeypatch.setattr(hooks._dispatch, "compile_callbacks", refuse)
    dispatch_all()


def test_async_dispatch_of_a_plain_chain_honours_continue_on_halt() -> None:
    """``arun_before`` over plain methods keeps a non-default policy: the last Halt wins."""
    callbacks = [
        module("a", before_probe=lambda ctx: Halt("a")),
        module("b", before_probe=lambda ctx: Halt("b")),
    ]
    policy = DispatchPolicy(continue_on_halt=True)
    assert asyncio.run(arun_before(callbacks, BEFORE, 1, policy=policy)) == Halt("b")
    assert asyncio.run(arun_before(callbacks, BEFORE, 1)) == Halt("a")


@which_point
def test_async_dispatch_of_a_plain_chain_honours_continue_on_error(which: str) -> None:
    """``arun_*`` over plain methods keeps ``continue_on_error``: later callbacks still run."""
    ran: list[str] = []

    def later(*args: Any) -> Any:
        ran.append("later")
        return passing(*args)

    callbacks = [
        module("boom", **{HOOK[which]: raising(Boom("first"))}),
        module("later", **{HOOK[which]: later}),
    ]
    policy = DispatchPolicy(continue_on_error=True)
    with pytest.raises(Boom, match="first"):
        Dispatch("async").probe(which, callbacks, policy=policy)
    assert ran == ["later"]


@pytest.mark.parametrize("form", ["list", "compiled", "sum", "async"])
def test_a_point_declared_after_compiling_dispatches_through_its_callbacks(form: str) -> None:
    """A point declared after a list was compiled reaches the callbacks that define it, in a
    list, a compiled form, a sum of compiled forms, or async dispatch; a dispatch started
    before the declaration refuses the list (its method would never be called)."""
    name = f"before_declared_later_{uuid.uuid4().hex}"
    late = make_instance("Late", **{name: lambda ctx: Cont(ctx + 1)})
    other = module("other", before_probe=passing)
    callbacks: Any = [late, other]
    if form in {"compiled", "async"}:
        callbacks = compile_callbacks(callbacks)
    elif form == "sum":
        callbacks = compile_callbacks([other]) + compile_callbacks([late])
    with pytest.raises(InvalidCallbacks, match=f"defines {name!r}"):
        run_before(callbacks, BEFORE, 1)  # dispatched before the declaration
    point: BeforePoint[int, str] = BeforePoint(name)
    assert run_before(callbacks, BEFORE, 1) == Cont(1)
    if form == "async":
        assert asyncio.run(arun_before(callbacks, point, 1)) == Cont(2)
    else:
        assert run_before(callbacks, point, 1) == Cont(2)


# -- errors raised while a Failure is handled ----------------------------------------


def handling(
    dispatch: Dispatch,
    which: str,
    callbacks: list[object],
    failure: Failure[Exception],
    trace: Trace | None,
) -> object:
    """Dispatch the after (outcome ``failure``) or the error probe point (``failure``)."""
    if which == "after":
        return dispatch.after(callbacks, AFTER, failure, 1, trace=trace)
    return dispatch.on_error(callbacks, ON_ERROR, failure, 1, trace=trace)


@pytest.mark.parametrize("which", ["after", "error"])
def test_an_invalid_result_shows_the_failure_it_handled(
    dispatch: Dispatch, trace: Trace | None, which: str
) -> None:
    """An illegal result returned while handling ``Failure(e)`` raises an InvalidResult whose
    ``__context__`` is ``e``, so its traceback shows the original error."""
    original = Boom("model down")
    lazy = module("lazy", **{HOOK[which]: dispatch.hook(lambda *args: None)})
    with pytest.raises(InvalidResult) as excinfo:
        handling(dispatch, which, [lazy], Failure(original), trace)
    assert excinfo.value.__context__ is original


@pytest.mark.parametrize("which", ["after", "error"])
def test_an_error_raised_while_handling_a_failure_shows_it(
    dispatch: Dispatch, trace: Trace | None, which: str
) -> None:
    """A callback's own error raised while it handled ``Failure(e)`` gets ``e`` as context."""
    original = Boom("model down")
    broken = module("broken", **{HOOK[which]: dispatch.hook(raising(KeyError("bug")))})
    with pytest.raises(KeyError) as excinfo:
        handling(dispatch, which, [broken], Failure(original), trace)
    assert excinfo.value.__context__ is original


def test_re_raising_the_failures_own_error_makes_no_cycle(
    dispatch: Dispatch, trace: Trace | None
) -> None:
    """A callback raising the very error its ``Failure`` carried raises it unchained."""
    original = Boom("model down")
    reraise = module("reraise", after_probe=dispatch.hook(raising(original)))
    with pytest.raises(Boom) as excinfo:
        dispatch.after([reraise], AFTER, Failure(original), 1, trace=trace)
    assert excinfo.value is original
    assert original.__context__ is None


def test_an_errors_own_context_is_kept(dispatch: Dispatch, trace: Trace | None) -> None:
    """An error raised inside the callback's own ``except`` keeps the context Python gave it."""
    inner = ValueError("inner")

    def handler(outcome: object, ctx: object) -> object:
        try:
            raise inner
        except ValueError:
            raise KeyError("outer") from None

    broken = module("broken", after_probe=dispatch.hook(handler))
    with pytest.raises(KeyError) as excinfo:
        dispatch.after([broken], AFTER, Failure(Boom()), 1, trace=trace)
    assert excinfo.value.__context__ is inner


def test_an_error_raised_on_a_success_has_no_context_added(
    dispatch: Dispatch, trace: Trace | None
) -> None:
    """An after callback raising while handling a ``Success`` gets no context from dispatch."""
    broken = module("broken", after_probe=dispatch.hook(raising(KeyError("bug"))))
    with pytest.raises(KeyError) as excinfo:
        dispatch.after([broken], AFTER, Success(1), 1, trace=trace)
    assert excinfo.value.__context__ is None


# -- StopIteration, BaseException, notes --------------------------------------------


@which_point
def test_stop_iteration_keeps_its_type_in_sync_dispatch(trace: Trace | None, which: str) -> None:
    """A callback's StopIteration leaves sync dispatch as itself, with the note."""
    stop = StopIteration("done")
    callbacks = [module("gen", **{HOOK[which]: raising(stop)})]
    with pytest.raises(StopIteration) as excinfo:
        Dispatch("sync").probe(which, callbacks, trace=trace)
    assert excinfo.value is stop
    assert "module 'gen'" in excinfo.value.__notes__[0]


@which_point
def test_stop_iteration_through_async_dispatch_is_its_cause(which: str) -> None:
    """No coroutine can raise StopIteration (PEP 479): a plain callback's StopIteration leaves
    ``arun_*`` as the ``__cause__`` of Python's RuntimeError -- the very exception, noted."""
    stop = StopIteration("done")
    with pytest.raises(RuntimeError, match="coroutine raised StopIteration") as excinfo:
        Dispatch("async").probe(which, [module("gen", **{HOOK[which]: raising(stop)})])
    assert excinfo.value.__cause__ is stop
    assert stop.__notes__ == [f"raised in callback module 'gen' at hook point {HOOK[which]!r}"]


@which_point
def test_stop_iteration_in_an_async_callback_is_its_own_runtime_error(which: str) -> None:
    """An ``async def`` callback's StopIteration is already a RuntimeError when its coroutine
    ends; dispatch notes that error and lets it through unchanged."""
    stop = StopIteration("done")
    dispatch = Dispatch("async")
    callbacks = [module("gen", **{HOOK[which]: dispatch.hook(raising(stop))})]
    with pytest.raises(RuntimeError, match="coroutine raised StopIteration") as excinfo:
        dispatch.probe(which, callbacks)
    assert excinfo.value.__cause__ is stop
    assert "module 'gen'" in excinfo.value.__notes__[0]


class Abort(BaseException):
    """A BaseException that is not an Exception."""


@which_point
@pytest.mark.parametrize(
    "policy",
    [None, DispatchPolicy(continue_on_error=True), DispatchPolicy(continue_on_halt=True)],
    ids=["default", "continue_on_error", "continue_on_halt"],
)
@pytest.mark.parametrize(
    "make_exc",
    [KeyboardInterrupt, SystemExit, asyncio.CancelledError, GeneratorExit, Abort],
    ids=lambda cls: cls.__name__,
)
def test_base_exceptions_propagate_untouched(
    dispatch: Dispatch,
    which: str,
    policy: DispatchPolicy | None,
    make_exc: type[BaseException],
) -> None:
    """A BaseException from a callback propagates at once as itself, without a note, whatever
    the policy; the callbacks after it do not run."""
    exc = make_exc()
    ran: list[str] = []

    def later(*args: Any) -> Any:
        ran.append("later")
        return passing(*args)

    callbacks = [
        module("stop", **{HOOK[which]: dispatch.hook(raising(exc))}),
        module("later", **{HOOK[which]: later}),
    ]
    with pytest.raises(make_exc) as excinfo:
        dispatch.probe(which, callbacks, policy=policy)
    assert excinfo.value is exc
    assert not hasattr(exc, "__notes__")
    assert ran == []


def test_a_reused_exception_gets_the_note_once(dispatch: Dispatch, trace: Trace | None) -> None:
    """Raised again through the same callback and point, one exception carries one note."""
    shared = Boom("shared")
    callbacks = [module("boom", before_probe=dispatch.hook(raising(shared)))]
    for _ in range(3):
        with pytest.raises(Boom):
            dispatch.before(callbacks, BEFORE, 1, trace=trace)
    assert shared.__notes__ == ["raised in callback module 'boom' at hook point 'before_probe'"]


# -- what a dispatch leaves behind when it is cut short or its error is re-raised -----


@which_point
def test_a_base_exception_leaves_the_trace_reset(dispatch: Dispatch, which: str) -> None:
    """A traced dispatch that a BaseException cuts short leaves ``trace.callback`` at None,
    not at the previous dispatch's answer."""
    trace = Trace()
    halting = module("halting", before_probe=lambda ctx: Halt("h"))
    assert dispatch.before([halting], BEFORE, 1, trace=trace) == Halt("h")
    assert trace.callback is halting
    callbacks = [module("stop", **{HOOK[which]: dispatch.hook(raising(Abort()))})]
    with pytest.raises(Abort):
        dispatch.probe(which, callbacks, trace=trace)
    assert trace.callback is None


@pytest.mark.parametrize("which", ["after", "error"])
def test_re_raising_an_error_from_the_failures_context_makes_no_cycle(
    dispatch: Dispatch, trace: Trace | None, which: str
) -> None:
    """A callback raising the error behind its ``Failure``'s error (that error's context)
    raises it unchained, so neither error's context chain loops."""
    root = Boom("connection reset")
    wrapped = KeyError("model down")
    wrapped.__context__ = root
    reraise = module("reraise", **{HOOK[which]: dispatch.hook(raising(root))})
    with pytest.raises(Boom) as excinfo:
        handling(dispatch, which, [reraise], Failure(wrapped), trace)
    assert excinfo.value is root
    assert root.__context__ is None
    assert wrapped.__context__ is root
