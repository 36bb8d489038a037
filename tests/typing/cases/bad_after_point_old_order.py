"""0.1's ``AfterPoint[T, C]`` order no longer type-checks: the context comes first."""

from dataclasses import dataclass
from typing import Final

from returns.result import Success

import hooks
from hooks import AfterPoint


@dataclass(frozen=True)
class Doc:
    text: str


@dataclass(frozen=True)
class SearchContext:
    query: str


AFTER_SEARCH: Final = AfterPoint[list[Doc], SearchContext]("after_search")


def search(callbacks: hooks.Callbacks, ctx: SearchContext) -> None:
    hooks.run_after(callbacks, AFTER_SEARCH, Success([Doc("a")]), ctx)  # E: [misc] Cannot infer value of type parameter "C" of "run_after"  # E: [misc] Cannot infer value of type parameter "T" of "run_after"
