"""Payload types given to a point fix its type parameters; a trace is typed too."""

from dataclasses import dataclass

from typing_extensions import assert_type

import hooks
from hooks import BeforePoint, Cont, ErrorPoint, Halt, Trace


@dataclass(frozen=True)
class Page:
    html: str


@dataclass(frozen=True)
class FetchContext:
    url: str


BEFORE_FETCH = BeforePoint("before_fetch", context=FetchContext, value=Page)
assert_type(BEFORE_FETCH, BeforePoint[FetchContext, Page])
ON_FETCH_ERROR = ErrorPoint[FetchContext, Page]("on_fetch_error", value=Page)


def fetch(callbacks: hooks.Callbacks, ctx: FetchContext) -> Page | None:
    trace = Trace()
    result = hooks.run_before(callbacks, BEFORE_FETCH, ctx, trace=trace)
    assert_type(trace.callback, object | None)
    assert_type(trace.description, str | None)
    match result:
        case Halt(page):
            return page
        case Cont():
            return None
