"""Callbacks and dispatch for the hooks tests: probe points, modules and instances made on
the fly, ``Dispatch`` (the sync or the async dispatch functions).
"""

from __future__ import annotations

import asyncio
import inspect
import types
from collections.abc import Callable
from typing import Any, Protocol, TypedDict, TypeVar

from returns.result import Failure, Success

from hooks import (
    AfterPoint,
    BeforePoint,
    Callbacks,
    Cont,
    DispatchPolicy,
    ErrorPoint,
    ErrorResult,
    Outcome,
    PausablePoint,
    PausableResult,
    Trace,
    arun_after,
    arun_before,
    arun_on_error,
    run_after,
    run_before,
    run_on_error,
)

C = TypeVar("C")
T = TypeVar("T")
Fn = Callable[..., Any]

BEFORE: BeforePoint[int, str] = BeforePoint("before_probe")
AFTER: AfterPoint[int, int] = AfterPoint("after_probe")
ON_ERROR: ErrorPoint[int, str] = ErrorPoint("on_probe_error")

HOOK = {"before": "before_probe", "after": "after_probe", "error": "on_probe_error"}


KINDS = ("module", "instance")
"""How a test builds its callbacks: as modules or as instances of a class."""


class Boom(Exception):
    """The exception the test callbacks raise."""


# -- building callbacks ----------------------------------------------------------------


class Make(Protocol):
    """Builds a callback called ``name`` with the given hook attributes."""

    def __call__(self, name: str, /, **attributes: object) -> object: ...


def make_module(name: str, /, **attributes: object) -> object:
    """A module whose attributes are the given functions (or other values)."""
    module = types.ModuleType(name)
    for attribute, value in attributes.items():
        setattr(module, attribute, value)
    return module


def make_instance(name: str, /, **attributes: object) -> object:
    """An instance of a fresh class ``name`` whose methods call the given functions."""
    namespace = {
        attribute: _method(value) if isinstance(value, types.FunctionType) else value
        for attribute, value in attributes.items()
    }
    return type(name, (), namespace)()


def _method(fn: Fn) -> Fn:
    """A method calling ``fn`` with its arguments, async when ``fn`` is, with ``fn``'s arity."""
    method = _async_method(fn) if inspect.iscoroutinefunction(fn) else _sync_method(fn)
    signature = inspect.signature(fn)
    own = inspect.Parameter("self", inspect.Parameter.POSITIONAL_ONLY)
    vars(method)["__signature__"] = signature.replace(
        parameters=[own, *signature.parameters.values()]
    )
    return method


def _sync_method(fn: Fn) -> Fn:
    def method(self: object, /, *args: object) -> object:
        return fn(*args)

    return method


def _async_method(fn: Fn) -> Fn:
    async def method(self: object, /, *args: object) -> object:
        return await fn(*args)

    return method


def described(kind: str, name: str) -> str:
    """How error messages name the callback ``name`` built as ``kind``."""
    return f"module {name!r}" if kind == "module" else f"{name} instance"


def rec(log: list[str], name: str, fn: Fn) -> Fn:
    """A hook that appends ``name`` to ``log`` and returns what ``fn`` returns."""

    def hook(*args: Any) -> Any:
        log.append(name)
        return fn(*args)

    return hook


def passing(*args: Any) -> Any:
    """Any hook that changes nothing: ``Cont(ctx)``, the outcome, or the failure."""
    return Cont(args[0]) if len(args) == 1 else args[0]


def listening(event: object) -> None:
    """An observer's ``on_event``: the one method of callbacks that define no point's method."""


def raising(exc: BaseException) -> Fn:
    """A hook that raises ``exc``."""

    def hook(*args: Any) -> Any:
        raise exc

    return hook


# -- dispatching -----------------------------------------------------------------------


class Options(TypedDict, total=False):
    """The keyword arguments every dispatch function takes."""

    policy: DispatchPolicy
    trace: Trace | None


def _options(policy: DispatchPolicy | None, trace: Trace | None) -> Options:
    """Only the options given, so a default dispatch is called exactly as users call it."""
    options = Options()
    if policy is not None:
        options["policy"] = policy
    if trace is not None:
        options["trace"] = trace
    return options


class Dispatch:
    """The sync or the async dispatch functions, chosen by ``mode``."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def hook(self, fn: Fn) -> Fn:
        """``fn`` in sync mode; an ``async def`` doing what ``fn`` does in async mode."""
        if self.mode == "sync":
            return fn

        async def async_hook(*args: Any) -> Any:
            await asyncio.sleep(0)  # really suspend, so only a real await gets past here
            return fn(*args)

        return async_hook

    def before(
        self,
        callbacks: Callbacks,
        point: BeforePoint[C, T] | PausablePoint[C, T],
        ctx: C,
        *,
        policy: DispatchPolicy | None = None,
        trace: Trace | None = None,
    ) -> PausableResult[C, T]:
        """``run_before`` or ``arun_before``."""
        options = _options(policy, trace)
        if self.mode == "sync":
            return run_before(callbacks, point, ctx, **options)
        return asyncio.run(arun_before(callbacks, point, ctx, **options))

    def after(
        self,
        callbacks: Callbacks,
        point: AfterPoint[C, T],
        outcome: Outcome[T],
        ctx: C,
        *,
        policy: DispatchPolicy | None = None,
        trace: Trace | None = None,
    ) -> Outcome[T]:
        """``run_after`` or ``arun_after``."""
        options = _options(policy, trace)
        if self.mode == "sync":
            return run_after(callbacks, point, outcome, ctx, **options)
        return asyncio.run(arun_after(callbacks, point, outcome, ctx, **options))

    def on_error(
        self,
        callbacks: Callbacks,
        point: ErrorPoint[C, T],
        failure: Failure[Exception],
        ctx: C,
        *,
        policy: DispatchPolicy | None = None,
        trace: Trace | None = None,
    ) -> ErrorResult[C, T]:
        """``run_on_error`` or ``arun_on_error``."""
        options = _options(policy, trace)
        if self.mode == "sync":
            return run_on_error(callbacks, point, failure, ctx, **options)
        return asyncio.run(arun_on_error(callbacks, point, failure, ctx, **options))

    def probe(
        self,
        which: str,
        callbacks: Callbacks,
        policy: DispatchPolicy | None = None,
        trace: Trace | None = None,
    ) -> object:
        """Dispatch the ``which`` probe point with a context of 1 (and ``Success(1)`` or a
        ``Failure``)."""
        if which == "before":
            return self.before(callbacks, BEFORE, 1, policy=policy, trace=trace)
        if which == "after":
            return self.after(callbacks, AFTER, Success(1), 1, policy=policy, trace=trace)
        failure: Failure[Exception] = Failure(Boom("probe"))
        return self.on_error(callbacks, ON_ERROR, failure, 1, policy=policy, trace=trace)
