"""Dispatch cost: hookline's ``run_before`` against hand-written loops and pluggy.

Run ``python -m benchmarks.dispatch`` (``--quick`` for a smoke run of a second or two).

For N = 0, 1, 3, 10, 50 callbacks it prints the ns per dispatch of each contender at
the ``before_model`` point, then the derived figures the design targets are stated in:

* per-callback cost (least-squares slope over N) of ``run_before`` at most 1.5x that of
  a hand loop whose callbacks build a plain ``__slots__`` result;
* dispatch overhead (ns per dispatch minus the N direct callback calls, measured) at
  least 4x smaller than pluggy's;
* fixed cost at N = 0 at most 3x a bare hand loop;
* ``run_before([a, b, c], point, ctx)`` with a fresh list each call at most 2x pluggy's
  hook call at N = 3 (the README's style: validation is cached per class and module,
  so a new list of known callbacks compiles in a few microseconds) -- both with
  callbacks that build their result (``Cont(ctx)``) and with callbacks that return a
  constant (a ``Cont`` made once), pluggy's plugins doing the same in each case.

A secondary table does the same per-point comparison for ``run_after`` and
``run_on_error`` against hand loops; a third times fresh lists and compiling one.

An async table times ``arun_before`` over N = 1, 3, 10, 50 ``async def`` callbacks
against a hand-written loop awaiting each one, with the target:

* per-callback cost (slope over N) of ``arun_before`` at most 2x the hand loop's.

A wrap table times ``run_wrap`` / ``arun_wrap`` through N = 0, 1, 3, 10 identity wraps
(``return call_next(ctx)``) around an operation returning a ready outcome, against a
hand-written nest of the same wraps -- ``w0(ctx, lambda c: w1(c, lambda c: op(c)))``,
its closures made on each call as the operation is new on each call -- with the target:

* per-wrap cost (slope over N) of ``run_wrap`` and ``arun_wrap`` at most 2x that of the
  hand nest (sync and async); the nest built once and reused is shown for reference.

How it times: each contender is one statement compiled into a loop over a preallocated
``itertools.repeat`` (as ``timeit`` does), every name it uses a local of that function.
A sample is one timed loop (``time.perf_counter_ns``) sized to about ``--sample-ms``; the
figure is the best sample of ``--repeat`` divided by the loop count. Samples of all
contenders at all N are taken round-robin, so a burst of load from another process hits
many of them alike. The cyclic GC is off while timing, as in ``timeit``. Nothing is
subtracted from the table: every figure includes the timing loop's own cost, shown as
``alone`` at N = 0.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import math
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from hooks import (
    AFTER_MODEL,
    BEFORE_MODEL,
    ON_MODEL_ERROR,
    WRAP_MODEL,
    CompiledCallbacks,
    Cont,
    Failure,
    Fallback,
    Halt,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Outcome,
    Retry,
    Success,
    arun_before,
    arun_wrap,
    compile_callbacks,
    run_after,
    run_before,
    run_on_error,
    run_wrap,
)

__all__ = ["main"]

SIZES: Final = (0, 1, 3, 10, 50)
K = TypeVar("K", bound=Hashable)

# Targets, as ratios (see the module docstring).
PER_CALLBACK_MAX: Final = 1.5
OVERHEAD_VS_PLUGGY_MIN: Final = 4.0
FIXED_MAX: Final = 3.0
FRESH_VS_PLUGGY_MAX: Final = 2.0
FRESH_N: Final = 3
WRAP_SIZES: Final = (0, 1, 3, 10)
PER_WRAP_MAX: Final = 2.0
ASYNC_SIZES: Final = (1, 3, 10, 50)
ASYNC_PER_CALLBACK_MAX: Final = 2.0


# -- the callbacks ------------------------------------------------------------------


class ContHook:
    """A callback as hookline users write it: each method builds hookline's result."""

    __slots__ = ()

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        return Cont(ctx)

    def after_model(
        self, outcome: Outcome[ModelResponse], ctx: ModelContext
    ) -> Outcome[ModelResponse]:
        return outcome

    def on_model_error(self, failure: Failure[Exception], ctx: ModelContext) -> Failure[Exception]:
        return failure


class ConstHook:
    """A callback returning one ``Cont`` made beforehand: building nothing per call."""

    __slots__ = ("result",)

    def __init__(self, result: Cont[ModelContext]) -> None:
        self.result = result

    def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        return self.result


class AsyncContHook:
    """``ContHook.before_model`` as ``async def``, for ``arun_before``."""

    __slots__ = ()

    async def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
        return Cont(ctx)


class PlainCont:
    """The cheapest result a hand-written hook system could use: one plain slot."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: ModelContext) -> None:
        self.ctx = ctx


class PlainHook:
    """``ContHook.before_model``, building a ``PlainCont`` instead of a ``Cont``."""

    __slots__ = ()

    def before_model(self, ctx: ModelContext) -> PlainCont:
        return PlainCont(ctx)


# -- the hand-written loops ---------------------------------------------------------

_BeforeFn = Callable[[ModelContext], Cont[ModelContext] | Halt[ModelResponse]]
_PlainFn = Callable[[ModelContext], PlainCont | Halt[ModelResponse]]
_AfterFn = Callable[[Outcome[ModelResponse], ModelContext], Outcome[ModelResponse]]
_ErrorResult = Retry[ModelContext] | Fallback[ModelResponse] | Failure[Exception]
_ErrorFn = Callable[[Failure[Exception], ModelContext], _ErrorResult]


def hand_before(
    fns: tuple[_BeforeFn, ...], ctx: ModelContext
) -> Cont[ModelContext] | Halt[ModelResponse]:
    """``run_before``'s rules for well-behaved callbacks, with nothing else."""
    for fn in fns:
        result = fn(ctx)
        if type(result) is Halt:
            return result
        ctx = result.ctx
    return Cont(ctx)


def hand_before_plain(
    fns: tuple[_PlainFn, ...], ctx: ModelContext
) -> PlainCont | Halt[ModelResponse]:
    """``hand_before`` over callbacks that return ``PlainCont``."""
    for fn in fns:
        result = fn(ctx)
        if type(result) is Halt:
            return result
        ctx = result.ctx
    return PlainCont(ctx)


async def ahand_before(
    fns: tuple[Callable[[ModelContext], Awaitable[Cont[ModelContext] | Halt[ModelResponse]]], ...],
    ctx: ModelContext,
) -> Cont[ModelContext] | Halt[ModelResponse]:
    """``hand_before`` over ``async def`` callbacks: awaits each one."""
    for fn in fns:
        result = await fn(ctx)
        if type(result) is Halt:
            return result
        ctx = result.ctx
    return Cont(ctx)


def hand_after(
    fns: tuple[_AfterFn, ...], outcome: Outcome[ModelResponse], ctx: ModelContext
) -> Outcome[ModelResponse]:
    """``run_after``'s rules for well-behaved callbacks: thread the outcome."""
    for fn in fns:
        outcome = fn(outcome, ctx)
    return outcome


def hand_on_error(
    fns: tuple[_ErrorFn, ...], failure: Failure[Exception], ctx: ModelContext
) -> _ErrorResult:
    """``run_on_error``'s rules for well-behaved callbacks: the first recovery wins."""
    for fn in fns:
        result = fn(failure, ctx)
        if type(result) is Retry or type(result) is Fallback:
            return result
        failure = result
    return failure


# -- pluggy -------------------------------------------------------------------------


def pluggy_version() -> str | None:
    """pluggy's version, or ``None`` when it is not installed."""
    try:
        import pluggy
    except ImportError:
        return None
    return str(getattr(pluggy, "__version__", "?"))


def pluggy_hook(
    n: int, constant: Cont[ModelContext] | None = None
) -> Callable[..., list[Cont[ModelContext]]] | None:
    """A pluggy hook caller for ``before_model(ctx)`` with ``n`` plugins, if pluggy is here.

    Each plugin's ``before_model`` has the body of ``ContHook.before_model`` or, given
    ``constant``, of ``ConstHook.before_model`` (it returns the one result it holds).
    pluggy calls every implementation and returns their results as a list, its natural
    form.
    """
    try:
        import pluggy
    except ImportError:
        return None

    hookspec = pluggy.HookspecMarker("bench")
    hookimpl = pluggy.HookimplMarker("bench")

    class Spec:
        @hookspec
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:  # type: ignore[empty-body]
            """The spec: one context in, one result out."""

    class Plugin:
        @hookimpl
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            return Cont(ctx)

    class ConstPlugin:
        def __init__(self, result: Cont[ModelContext]) -> None:
            self.result = result

        @hookimpl
        def before_model(self, ctx: ModelContext) -> Cont[ModelContext]:
            return self.result

    manager = pluggy.PluginManager("bench")
    manager.add_hookspecs(Spec)
    for index in range(n):
        plugin = Plugin() if constant is None else ConstPlugin(constant)
        manager.register(plugin, name=f"plugin{index}")
    hook: Callable[..., list[Cont[ModelContext]]] = manager.hook.before_model
    return hook


# -- timing -------------------------------------------------------------------------

_TEMPLATE: Final = """\
{kw}def inner(_n, _timer, {params}):
    _it = _repeat(None, _n)
    _t0 = _timer()
    for _ in _it:
        {stmt}
    return _timer() - _t0
"""


@dataclass(frozen=True)
class Case:
    """One contender: a statement timed in a loop, its names bound as locals."""

    label: str
    stmt: str
    names: Mapping[str, object]
    is_async: bool = False

    def compile(self) -> Callable[[int], int]:
        """A function running the statement ``n`` times, returning the ns it took."""
        source = _TEMPLATE.format(
            kw="async " if self.is_async else "",
            params=", ".join(self.names),
            stmt=self.stmt,
        )
        namespace: dict[str, Any] = {"_repeat": itertools.repeat}
        exec(compile(source, f"<benchmark {self.label}>", "exec"), namespace)
        inner = namespace["inner"]
        args = tuple(self.names.values())
        label = self.label

        def run(n: int) -> int:
            return int(inner(n, time.perf_counter_ns, *args))

        def run_coroutine(n: int) -> int:
            # Nothing in the chain suspends, so the coroutine finishes on its first send:
            # no event loop in the figure, only creating and awaiting arun_* coroutines.
            coroutine = inner(n, time.perf_counter_ns, *args)
            try:
                coroutine.send(None)
            except StopIteration as stop:
                return int(stop.value)
            coroutine.close()
            msg = f"{label}: a dispatch suspended; this benchmark drives it without a loop"
            raise RuntimeError(msg)

        return run_coroutine if self.is_async else run


def _calibrate(run: Callable[[int], int], sample_ns: int) -> int:
    """A loop count that makes one sample of ``run`` take about ``sample_ns``."""
    n = 1
    while True:
        elapsed = run(n)
        if elapsed * 8 >= sample_ns or n >= 1 << 26:
            return max(1, round(n * sample_ns / max(elapsed, 1)))
        n *= 4


@dataclass(frozen=True)
class Timing:
    """ns per run of one case: the best sample and the median one."""

    best: float
    median: float


def measure(cases: Mapping[K, Case], *, repeat: int, sample_ns: int) -> dict[K, Timing]:
    """``repeat`` samples of every case, taken round-robin over all of them.

    One round times each case once, so a burst of load from another process lands on
    many cases alike instead of on one contender or one N; the best sample of each
    case is the one least disturbed.
    """
    runs = {key: case.compile() for key, case in cases.items()}
    keys = list(runs)
    samples: dict[K, list[float]] = {key: [] for key in keys}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        counts = {key: _calibrate(runs[key], sample_ns) for key in keys}
        for round_ in range(repeat):
            shift = round_ * 7 % len(keys)
            for key in keys[shift:] + keys[:shift]:
                samples[key].append(runs[key](counts[key]) / counts[key])
    finally:
        if gc_was_enabled:
            gc.enable()
    return {key: Timing(min(values), statistics.median(values)) for key, values in samples.items()}


# -- the contenders -----------------------------------------------------------------

RB_LIST: Final = "rb[list]"
RB_COMPILED: Final = "rb[compiled]"
ARB_COMPILED: Final = "arb[compiled]"
HAND: Final = "hand[Cont]"
HAND_PLAIN: Final = "hand[plain]"
ALONE: Final = "alone"
PLUGGY: Final = "pluggy"

LEGEND: Final = {
    RB_LIST: "run_before(callbacks_list, BEFORE_MODEL, ctx); the list is compiled on first "
    "use and found again by identity",
    RB_COMPILED: "run_before(compile_callbacks(callbacks_list), BEFORE_MODEL, ctx)",
    ARB_COMPILED: "await arun_before(compile_callbacks(callbacks_list), BEFORE_MODEL, ctx) in "
    "a coroutine, driven without an event loop (nothing suspends)",
    HAND: "hand_before(bound_methods, ctx): the same callbacks and Cont results, a plain "
    "for loop (reads the Cont.ctx property)",
    HAND_PLAIN: "hand_before_plain: the same loop, callbacks building a plain __slots__ "
    "PlainCont (reads a plain slot)",
    ALONE: "the N bound before_model methods of the list called directly, unrolled, "
    "results dropped (at N = 0: the empty timing loop)",
    PLUGGY: "pluggy hook.before_model(ctx=ctx), N plugins with the same method body; "
    "returns the list of N results",
}


def _context() -> ModelContext:
    invocation = Invocation("bench-invocation", "bench", "bench")
    return ModelContext(invocation, ModelRequest((Message("user", "hello"),)))


def _unrolled(fns: Sequence[Callable[..., object]], args: str) -> tuple[str, dict[str, object]]:
    names: dict[str, object] = {f"f{index}": fn for index, fn in enumerate(fns)}
    stmt = "; ".join(f"{name}({args})" for name in names) or "pass"
    return stmt, names


def before_cases(n: int, ctx: ModelContext) -> list[Case]:
    """The contenders of the main table at ``n`` callbacks, checked to agree first."""
    callbacks = [ContHook() for _ in range(n)]
    compiled = compile_callbacks(callbacks)
    fns = tuple(callback.before_model for callback in callbacks)
    plain_fns = tuple(PlainHook().before_model for _ in range(n))
    point = BEFORE_MODEL
    alone_stmt, alone_names = _unrolled(fns, "ctx")
    at = {"point": point, "ctx": ctx}
    cases = [
        Case(RB_LIST, "rb(cbs, point, ctx)", {"rb": run_before, "cbs": callbacks, **at}),
        Case(RB_COMPILED, "rb(cbs, point, ctx)", {"rb": run_before, "cbs": compiled, **at}),
        Case(
            ARB_COMPILED,
            "await arb(cbs, point, ctx)",
            {"arb": arun_before, "cbs": compiled, **at},
            is_async=True,
        ),
        Case(HAND, "hand(fns, ctx)", {"hand": hand_before, "fns": fns, "ctx": ctx}),
        Case(
            HAND_PLAIN, "hand(fns, ctx)", {"hand": hand_before_plain, "fns": plain_fns, "ctx": ctx}
        ),
        Case(ALONE, alone_stmt, {**alone_names, "ctx": ctx}),
    ]
    hook = pluggy_hook(n)
    if hook is not None:
        cases.append(Case(PLUGGY, "hook(ctx=ctx)", {"hook": hook, "ctx": ctx}))
        _check(len(hook(ctx=ctx)) == n, "pluggy did not return one result per plugin")
    expected = Cont(ctx)
    _check(run_before(callbacks, point, ctx) == expected, "run_before[list] disagrees")
    _check(run_before(compiled, point, ctx) == expected, "run_before[compiled] disagrees")
    _check(hand_before(fns, ctx) == expected, "hand_before disagrees")
    plain = hand_before_plain(plain_fns, ctx)
    _check(type(plain) is PlainCont and plain.ctx is ctx, "hand_before_plain disagrees")
    return cases


def after_error_cases(n: int, ctx: ModelContext) -> list[Case]:
    """The secondary table's contenders at ``n`` callbacks, checked to agree first."""
    callbacks = [ContHook() for _ in range(n)]
    compiled = compile_callbacks(callbacks)
    outcome: Outcome[ModelResponse] = Success(ModelResponse("ok"))
    failure: Failure[Exception] = Failure(RuntimeError("model down"))
    after_fns = tuple(callback.after_model for callback in callbacks)
    error_fns = tuple(callback.on_model_error for callback in callbacks)
    after = {"point": AFTER_MODEL, "outcome": outcome, "ctx": ctx}
    error = {"point": ON_MODEL_ERROR, "failure": failure, "ctx": ctx}
    _check(run_after(callbacks, AFTER_MODEL, outcome, ctx) is outcome, "run_after disagrees")
    _check(
        run_on_error(compiled, ON_MODEL_ERROR, failure, ctx) is failure, "run_on_error disagrees"
    )
    _check(hand_after(after_fns, outcome, ctx) is outcome, "hand_after disagrees")
    _check(hand_on_error(error_fns, failure, ctx) is failure, "hand_on_error disagrees")
    return [
        Case(
            "after[list]",
            "ra(cbs, point, outcome, ctx)",
            {"ra": run_after, "cbs": callbacks, **after},
        ),
        Case(
            "after[compiled]",
            "ra(cbs, point, outcome, ctx)",
            {"ra": run_after, "cbs": compiled, **after},
        ),
        Case(
            "after[hand]",
            "hand(fns, outcome, ctx)",
            {"hand": hand_after, "fns": after_fns, **after},
        ),
        Case(
            "error[list]",
            "re(cbs, point, failure, ctx)",
            {"re": run_on_error, "cbs": callbacks, **error},
        ),
        Case(
            "error[compiled]",
            "re(cbs, point, failure, ctx)",
            {"re": run_on_error, "cbs": compiled, **error},
        ),
        Case(
            "error[hand]",
            "hand(fns, failure, ctx)",
            {"hand": hand_on_error, "fns": error_fns, **error},
        ),
    ]


FRESH: Final = "rb[fresh]"
FRESH_CONST: Final = "rb[fresh const]"
PLUGGY_CONST: Final = "pluggy[const]"
FRESH_NEW: Final = "rb[fresh new]"
NEW_ALONE: Final = "new alone"
COMPILE: Final = "compile[fresh]"
FRESH_LEGEND: Final = {
    FRESH: "run_before([a, b, c], BEFORE_MODEL, ctx): a new list of the same three callbacks "
    "each call",
    FRESH_CONST: "the same with three ConstHook callbacks, returning a Cont made once",
    PLUGGY_CONST: "pluggy hook.before_model(ctx=ctx), three plugins returning a Cont made once",
    FRESH_NEW: "run_before([ContHook(), ContHook(), ContHook()], ...): new instances of a "
    "known class each call",
    NEW_ALONE: "[ContHook(), ContHook(), ContHook()] alone: what building the instances costs",
    COMPILE: "CompiledCallbacks([a, b, c]): compiling a new list of known callbacks, no "
    "identity cache",
}


def fresh_cases(ctx: ModelContext) -> list[Case]:
    """The fresh-list contenders at N = 3, checked to agree first."""
    a, b, c = ContHook(), ContHook(), ContHook()
    constant = Cont(ctx)
    x, y, z = ConstHook(constant), ConstHook(constant), ConstHook(constant)
    at = {"rb": run_before, "point": BEFORE_MODEL, "ctx": ctx}
    _check(run_before([a, b, c], BEFORE_MODEL, ctx) == Cont(ctx), "run_before[fresh] disagrees")
    _check(run_before([x, y, z], BEFORE_MODEL, ctx) is constant, "run_before[const] disagrees")
    _check(len(CompiledCallbacks([a, b, c]).methods(BEFORE_MODEL)) == 3, "compile disagrees")
    cases = [
        Case(FRESH, "rb([a, b, c], point, ctx)", {"a": a, "b": b, "c": c, **at}),
        Case(FRESH_CONST, "rb([a, b, c], point, ctx)", {"a": x, "b": y, "c": z, **at}),
        Case(FRESH_NEW, "rb([k(), k(), k()], point, ctx)", {"k": ContHook, **at}),
        Case(NEW_ALONE, "[k(), k(), k()]", {"k": ContHook}),
        Case(COMPILE, "cc([a, b, c])", {"cc": CompiledCallbacks, "a": a, "b": b, "c": c}),
    ]
    hook = pluggy_hook(FRESH_N, constant)
    if hook is not None:
        _check(all(result is constant for result in hook(ctx=ctx)), "pluggy[const] disagrees")
        cases.append(Case(PLUGGY_CONST, "hook(ctx=ctx)", {"hook": hook, "ctx": ctx}))
    return cases


def report_fresh(fresh: Mapping[str, float], before: Mapping[str, float]) -> None:
    """Print the fresh-list figures and their target."""
    print(
        f"4. fresh lists at N={FRESH_N} (target: {FRESH} and {FRESH_CONST} at most "
        f"{FRESH_VS_PLUGGY_MAX}x pluggy with the same callbacks)"
    )
    for label, text in FRESH_LEGEND.items():
        if label in fresh:
            print(f"   {label:<15} {_ns(fresh[label]):>7} ns  {text}")
    print(f"   {RB_LIST:<15} {_ns(before[RB_LIST]):>7} ns  the same three in a reused list")
    if PLUGGY in before:
        for label, base, name in (
            (FRESH, before[PLUGGY], PLUGGY),
            (FRESH_CONST, fresh[PLUGGY_CONST], PLUGGY_CONST),
        ):
            ratio = fresh[label] / base
            print(
                f"   {label} vs {name}: {_ns(fresh[label])} ns vs {_ns(base)} ns = "
                f"{ratio:5.2f}x  {_verdict(ratio <= FRESH_VS_PLUGGY_MAX)}"
            )
        new = fresh[FRESH_NEW] - fresh[NEW_ALONE]
        print(
            f"   {FRESH_NEW} minus building the instances vs pluggy: {_ns(new)} ns = "
            f"{new / before[PLUGGY]:5.2f}x"
        )
    else:
        print("   vs pluggy: skipped, pluggy is not installed")
    print(f"   compiling a fresh {FRESH_N}-list: {fresh[COMPILE] / 1000:.2f} µs")
    print()


def _check(ok: bool, what: str) -> None:
    if not ok:
        raise RuntimeError(f"benchmark contenders disagree: {what}")


# -- async callbacks ----------------------------------------------------------------

ARB_ASYNC: Final = "arb[async]"
AHAND: Final = "ahand"
ASYNC_LEGEND: Final = {
    ARB_ASYNC: "await arun_before(compiled, BEFORE_MODEL, ctx) over N async def callbacks "
    "(AsyncContHook), driven without an event loop",
    AHAND: "await ahand_before(bound_methods, ctx): a plain for loop awaiting each callback",
}


def async_cases(n: int, ctx: ModelContext) -> list[Case]:
    """The async table's contenders at ``n`` callbacks, checked to agree first."""
    compiled = compile_callbacks([AsyncContHook() for _ in range(n)])
    fns = tuple(callback.before_model for callback in compiled.callbacks)  # type: ignore[attr-defined]
    expected = Cont(ctx)
    _check(_drive(arun_before(compiled, BEFORE_MODEL, ctx)) == expected, "arun_before disagrees")
    _check(_drive(ahand_before(fns, ctx)) == expected, "ahand_before disagrees")
    return [
        Case(
            ARB_ASYNC,
            "await arb(cbs, point, ctx)",
            {"arb": arun_before, "cbs": compiled, "point": BEFORE_MODEL, "ctx": ctx},
            is_async=True,
        ),
        Case(
            AHAND,
            "await hand(fns, ctx)",
            {"hand": ahand_before, "fns": fns, "ctx": ctx},
            is_async=True,
        ),
    ]


def report_async(results: Mapping[int, Mapping[str, float]]) -> None:
    """Print the async table and its target."""
    labels = list(ASYNC_LEGEND)
    sizes = list(results)
    slopes = {label: slope({n: results[n][label] for n in sizes}) for label in labels}
    for label, text in ASYNC_LEGEND.items():
        print(f"  {label:<14} {text}")
    print()
    rows: dict[str, Mapping[str, float]] = {f"N={n}": results[n] for n in sizes}
    rows["ns/callback"] = slopes
    _table("ns per dispatch over N async def callbacks at before_model", labels, rows)
    ratio = slopes[ARB_ASYNC] / slopes[AHAND]
    print(
        f"6. async callbacks: per-callback cost, slope over N = {sizes}, vs {AHAND} "
        f"(target: at most {ASYNC_PER_CALLBACK_MAX}x)"
    )
    print(
        f"   {ARB_ASYNC:<14} {_ns(slopes[ARB_ASYNC]):>7} ns vs {_ns(slopes[AHAND]):>7} ns = "
        f"{ratio:5.2f}x  {_verdict(ratio <= ASYNC_PER_CALLBACK_MAX)}"
    )
    per_n = "  ".join(f"N={n}: {results[n][ARB_ASYNC] / results[n][AHAND]:4.2f}x" for n in sizes)
    print(f"   whole dispatch vs {AHAND}: {per_n}")
    print()


# -- wraps --------------------------------------------------------------------------

_Operation = Callable[[ModelContext], Outcome[ModelResponse]]
_AsyncOperation = Callable[[ModelContext], Awaitable[Outcome[ModelResponse]]]


class WrapHook:
    """An identity wrap: calls ``call_next`` once and returns its outcome."""

    __slots__ = ()

    def wrap_model(self, ctx: ModelContext, call_next: _Operation) -> Outcome[ModelResponse]:
        return call_next(ctx)


class AsyncWrapHook:
    """``WrapHook`` as ``async def``, for ``arun_wrap``."""

    __slots__ = ()

    async def wrap_model(
        self, ctx: ModelContext, call_next: _AsyncOperation
    ) -> Outcome[ModelResponse]:
        return await call_next(ctx)


def hand_nest(n: int, *, is_async: bool = False) -> Callable[..., Any]:
    """The nest of ``n`` wraps as one writes it by hand for a fixed ``n``.

    ``nest(f0, ..., op, ctx)`` runs ``f0(ctx, lambda c: f1(c, ... op(c)))`` (async: the
    same with ``async def`` closures). Each closure is made when its level runs, on
    every call, as in a runner whose operation is new for each call.
    """
    params = ", ".join([*(f"f{index}" for index in range(n)), "op", "ctx"])
    if not is_async:
        nest = "op"
        for index in reversed(range(n)):
            nest = f"(lambda c: f{index}(c, {nest}))"
        source = f"def nest({params}):\n    return {nest}(ctx)\n"
    else:
        lines = [f"async def nest({params}):"]
        inner = "op"
        for index in reversed(range(n)):
            lines.append(f"    async def n{index}(c):\n        return await f{index}(c, {inner})")
            inner = f"n{index}"
        lines.append(f"    return await {inner}(ctx)")
        source = "\n".join(lines) + "\n"
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<hand nest {n}>", "exec"), namespace)
    fn: Callable[..., Any] = namespace["nest"]
    return fn


def hand_prebuilt(fns: Sequence[Callable[..., Any]], op: _Operation) -> _Operation:
    """The same nest built once: calling it costs the wraps and one closure call each."""
    call: _Operation = op
    for fn in reversed(fns):
        call = _link(fn, call)
    return call


def _link(fn: Callable[..., Any], call: _Operation) -> _Operation:
    return lambda c: fn(c, call)


RW_LIST: Final = "rw[list]"
RW_COMPILED: Final = "rw[compiled]"
HAND_NEST: Final = "hand[nest]"
HAND_PREBUILT: Final = "hand[prebuilt]"
ARW_COMPILED: Final = "arw[compiled]"
AHAND_NEST: Final = "ahand[nest]"
WRAP_LEGEND: Final = {
    RW_LIST: "run_wrap(callbacks_list, WRAP_MODEL, ctx, op)",
    RW_COMPILED: "run_wrap(compile_callbacks(callbacks_list), WRAP_MODEL, ctx, op)",
    HAND_NEST: "f0(ctx, lambda c: f1(c, ... op(c))) written out for the N bound wrap_model methods",
    HAND_PREBUILT: "that nest built once and reused (no closure made per call)",
    ARW_COMPILED: "await arun_wrap(compiled, WRAP_MODEL, ctx, aop), async wraps, driven "
    "without an event loop",
    AHAND_NEST: "the hand nest with async def closures, awaited the same way",
}


def wrap_cases(n: int, ctx: ModelContext) -> list[Case]:
    """The wrap table's contenders at ``n`` wraps, checked to agree first."""
    outcome: Outcome[ModelResponse] = Success(ModelResponse("ok"))

    def op(ctx: ModelContext) -> Outcome[ModelResponse]:
        return outcome

    async def aop(ctx: ModelContext) -> Outcome[ModelResponse]:
        return outcome

    callbacks = [WrapHook() for _ in range(n)]
    compiled = compile_callbacks(callbacks)
    acompiled = compile_callbacks([AsyncWrapHook() for _ in range(n)])
    fns = tuple(callback.wrap_model for callback in callbacks)
    afns = tuple(callback.wrap_model for callback in acompiled.callbacks)  # type: ignore[attr-defined]
    nest, anest = hand_nest(n), hand_nest(n, is_async=True)
    prebuilt = hand_prebuilt(fns, op)
    at = {"point": WRAP_MODEL, "ctx": ctx}
    _check(run_wrap(callbacks, WRAP_MODEL, ctx, op) is outcome, "run_wrap disagrees")
    _check(nest(*fns, op, ctx) is outcome, "the hand nest disagrees")
    _check(prebuilt(ctx) is outcome, "the prebuilt nest disagrees")
    _check(_drive(arun_wrap(acompiled, WRAP_MODEL, ctx, aop)) is outcome, "arun_wrap disagrees")
    _check(_drive(anest(*afns, aop, ctx)) is outcome, "the async hand nest disagrees")
    names = {f"f{index}": fn for index, fn in enumerate(fns)}
    anames = {f"f{index}": fn for index, fn in enumerate(afns)}
    args = ", ".join([*names, "op", "ctx"])
    return [
        Case(
            RW_LIST, "rw(cbs, point, ctx, op)", {"rw": run_wrap, "cbs": callbacks, "op": op, **at}
        ),
        Case(
            RW_COMPILED,
            "rw(cbs, point, ctx, op)",
            {"rw": run_wrap, "cbs": compiled, "op": op, **at},
        ),
        Case(HAND_NEST, f"nest({args})", {"nest": nest, **names, "op": op, "ctx": ctx}),
        Case(HAND_PREBUILT, "prebuilt(ctx)", {"prebuilt": prebuilt, "ctx": ctx}),
        Case(
            ARW_COMPILED,
            "await arw(cbs, point, ctx, op)",
            {"arw": arun_wrap, "cbs": acompiled, "op": aop, **at},
            is_async=True,
        ),
        Case(
            AHAND_NEST,
            f"await nest({args})",
            {"nest": anest, **anames, "op": aop, "ctx": ctx},
            is_async=True,
        ),
    ]


def _drive(awaitable: Awaitable[object]) -> object:
    """The result of a coroutine that never suspends, without an event loop."""
    coroutine = awaitable.__await__()
    try:
        coroutine.send(None)
    except StopIteration as stop:
        return stop.value
    msg = "a wrap dispatch suspended; this benchmark drives it without a loop"
    raise RuntimeError(msg)


def report_wrap(results: Mapping[int, Mapping[str, float]]) -> None:
    """Print the wrap table and its target."""
    labels = list(WRAP_LEGEND)
    sizes = list(results)
    slopes = {label: slope({n: results[n][label] for n in sizes}) for label in labels}
    rows: dict[str, Mapping[str, float]] = {f"N={n}": results[n] for n in sizes}
    rows["ns/wrap"] = slopes
    for label, text in WRAP_LEGEND.items():
        print(f"  {label:<14} {text}")
    print()
    _table(
        "ns per dispatch through N identity wraps at wrap_model (best of the repeats)", labels, rows
    )
    print(
        f"5. per-wrap cost: slope over N = {sizes} vs the hand nest "
        f"(target: at most {PER_WRAP_MAX}x)"
    )
    for label, base in ((RW_LIST, HAND_NEST), (RW_COMPILED, HAND_NEST), (ARW_COMPILED, AHAND_NEST)):
        ratio = slopes[label] / slopes[base]
        print(
            f"   {label:<14} {_ns(slopes[label]):>7} ns vs {base} {_ns(slopes[base]):>7} ns = "
            f"{ratio:5.2f}x  {_verdict(ratio <= PER_WRAP_MAX)}"
        )
    ratio = slopes[RW_COMPILED] / slopes[HAND_PREBUILT]
    print(f"   (vs {HAND_PREBUILT}, the nest made once: {RW_COMPILED} is {ratio:4.2f}x per wrap)")
    print()


# -- report -------------------------------------------------------------------------


def slope(points: Mapping[int, float]) -> float:
    """Least-squares ns per callback over the measured N."""
    xs = list(points)
    return statistics.linear_regression(xs, [points[x] for x in xs]).slope


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _ns(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 10 else f"{value:,.1f}"


def _table(title: str, labels: Sequence[str], rows: Mapping[str, Mapping[str, float]]) -> None:
    width = max(11, *(len(label) for label in labels)) + 2
    print(title)
    print(f"{'':>{10}}" + "".join(f"{label:>{width}}" for label in labels))
    for key, row in rows.items():
        print(f"{key:>{10}}" + "".join(f"{_ns(row[label]):>{width}}" for label in labels))
    print()


def report_before(results: Mapping[int, Mapping[str, float]], labels: Sequence[str]) -> None:
    """Print the main table and the three targets."""
    sizes = list(results)
    by_label = {label: {n: results[n][label] for n in sizes} for label in labels}
    slopes = {label: slope(by_label[label]) for label in labels}
    rows: dict[str, Mapping[str, float]] = {f"N={n}": results[n] for n in sizes}
    rows["ns/callback"] = slopes
    _table("ns per dispatch at before_model (best of the repeats; lower is better)", labels, rows)

    print(f"1. per-callback cost: least-squares slope over N = {sizes}, vs {HAND_PLAIN}")
    print(f"   (target: at most {PER_CALLBACK_MAX}x)")
    base = slopes[HAND_PLAIN]
    for label in (RB_LIST, RB_COMPILED, ARB_COMPILED, HAND):
        ratio = slopes[label] / base
        print(
            f"   {label:<14} {_ns(slopes[label]):>7} ns vs {_ns(base):>7} ns = "
            f"{ratio:5.2f}x  {_verdict(ratio <= PER_CALLBACK_MAX)}"
        )
    print()

    if PLUGGY in labels:
        report_overhead(results, sizes, slopes)
    else:
        print("2. dispatch overhead vs pluggy: skipped, pluggy is not installed")
        print("   (pip install 'hookline[benchmark]')")
    print()

    print(
        f"3. fixed cost at N=0 vs the bare hand loop {HAND} at N=0 (target: at most {FIXED_MAX}x)"
    )
    bare = results[0][HAND]
    for label in (RB_LIST, RB_COMPILED, ARB_COMPILED):
        ratio = results[0][label] / bare
        print(
            f"   {label:<14} {_ns(results[0][label]):>7} ns vs {_ns(bare):>7} ns = "
            f"{ratio:5.2f}x  {_verdict(ratio <= FIXED_MAX)}"
        )
    print(f"   (the empty timing loop, included in both: {_ns(results[0][ALONE])} ns)")
    print()


def report_overhead(
    results: Mapping[int, Mapping[str, float]], sizes: Sequence[int], slopes: Mapping[str, float]
) -> None:
    """Print overheads (ns/dispatch minus the N direct calls) and pluggy's over each."""
    contenders = (RB_LIST, RB_COMPILED, ARB_COMPILED)
    print(f"2. dispatch overhead: ns/dispatch minus '{ALONE}' at the same N; in brackets, pluggy's")
    print(f"   overhead divided by it (target: pluggy's at least {OVERHEAD_VS_PLUGGY_MIN}x)")
    print(f"{'':>10}" + "".join(f"{label:>18}" for label in (*contenders, PLUGGY)))
    ratios: dict[str, dict[int, float]] = {label: {} for label in contenders}
    for n in sizes:
        row = {label: results[n][label] - results[n][ALONE] for label in (*contenders, PLUGGY)}
        cells = []
        for label in contenders:
            ratio = row[PLUGGY] / row[label] if row[label] > 0 else math.inf
            ratios[label][n] = ratio
            cells.append(f"{_ns(row[label])} ({ratio:4.1f}x)")
        cells.append(_ns(row[PLUGGY]))
        print(f"{f'N={n}':>10}" + "".join(f"{cell:>18}" for cell in cells))
    per_callback = {label: slopes[label] - slopes[ALONE] for label in (*contenders, PLUGGY)}
    cells = [
        f"{_ns(per_callback[label])} ({per_callback[PLUGGY] / per_callback[label]:4.1f}x)"
        if per_callback[label] > 0
        else _ns(per_callback[label])
        for label in contenders
    ]
    cells.append(_ns(per_callback[PLUGGY]))
    print(f"{'/callback':>10}" + "".join(f"{cell:>18}" for cell in cells))
    for label in contenders:
        worst = min(ratios[label], key=ratios[label].__getitem__)
        passing = [n for n in sizes if ratios[label][n] >= OVERHEAD_VS_PLUGGY_MIN]
        where = f"met at N = {passing}" if passing else "met at no N"
        print(
            f"   {label:<14} worst at N={worst}: {ratios[label][worst]:4.1f}x; {where}  "
            f"{_verdict(len(passing) == len(sizes))}"
        )


def report_after_error(results: Mapping[int, Mapping[str, float]], labels: Sequence[str]) -> None:
    """Print the secondary table: run_after and run_on_error against hand loops."""
    rows: dict[str, Mapping[str, float]] = {f"N={n}": row for n, row in results.items()}
    _table(
        "ns per dispatch at after_model and on_model_error (pass-through callbacks)", labels, rows
    )
    print("   ratio to the hand loop   " + "".join(f"{f'N={n}':>8}" for n in results))
    for point in ("after", "error"):
        for form in ("list", "compiled"):
            label = f"{point}[{form}]"
            ratios = [row[label] / row[f"{point}[hand]"] for row in results.values()]
            print(f"   {label:<24}" + "".join(f"{ratio:7.2f}x" for ratio in ratios))
    print(
        "   (run_on_error also checks that each Failure holds an Exception; the hand loop does not)"
    )
    print()


# -- main ---------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Measure and print; returns 0 (a missed target is reported, not an error)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.dispatch",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="few short samples: a smoke run")
    parser.add_argument(
        "--repeat", type=int, default=None, help="samples per contender (best is kept)"
    )
    parser.add_argument("--sample-ms", type=float, default=None, help="target length of one sample")
    args = parser.parse_args(argv)
    repeat: int = (5 if args.quick else 25) if args.repeat is None else args.repeat
    sample_ms: float = (1.0 if args.quick else 10.0) if args.sample_ms is None else args.sample_ms
    if repeat < 1 or sample_ms <= 0:
        parser.error("--repeat and --sample-ms must be positive")
    sample_ns = round(sample_ms * 1e6)

    version = pluggy_version()
    print(
        f"hookline dispatch benchmark: Python {platform.python_version()} "
        f"({platform.python_implementation()}), {'quick' if args.quick else 'full'} mode, "
        f"best of {repeat} samples of ~{sample_ms:g} ms"
    )
    if version is None:
        print("pluggy is not installed: its column and the overhead comparison are skipped")
    else:
        print(f"pluggy {version}")
    print()
    for label, text in LEGEND.items():
        if label != PLUGGY or version is not None:
            print(f"  {label:<14} {text}")
    print()

    started = time.perf_counter()
    ctx = _context()
    cases: dict[tuple[str, int, str], Case] = {}
    for n in SIZES:
        cases.update((("before", n, case.label), case) for case in before_cases(n, ctx))
        cases.update((("after_error", n, case.label), case) for case in after_error_cases(n, ctx))
    cases.update((("fresh", FRESH_N, case.label), case) for case in fresh_cases(ctx))
    for n in WRAP_SIZES:
        cases.update((("wrap", n, case.label), case) for case in wrap_cases(n, ctx))
    for n in ASYNC_SIZES:
        cases.update((("async", n, case.label), case) for case in async_cases(n, ctx))
    timings = measure(cases, repeat=repeat, sample_ns=sample_ns)
    tables: dict[str, dict[int, dict[str, float]]] = {
        "before": {},
        "after_error": {},
        "fresh": {},
        "wrap": {},
        "async": {},
    }
    for (table, n, label), timing in timings.items():
        tables[table].setdefault(n, {})[label] = timing.best
    report_before(tables["before"], list(tables["before"][SIZES[0]]))
    report_after_error(tables["after_error"], list(tables["after_error"][SIZES[0]]))
    report_fresh(tables["fresh"][FRESH_N], tables["before"][FRESH_N])
    report_wrap(tables["wrap"])
    report_async(tables["async"])
    spreads = {key: timing.median / timing.best - 1 for key, timing in timings.items()}
    worst = max(spreads, key=spreads.__getitem__)
    print(
        f"noise: median sample vs best sample, over the {len(spreads)} timings: typically "
        f"+{statistics.median(spreads.values()):.0%}, at most +{spreads[worst]:.0%} "
        f"({worst[2]} at N={worst[1]}); well above +10% means the machine was busy: rerun"
    )
    print(f"measured in {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
