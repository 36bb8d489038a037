"""``AfterPoint[C, T]`` is written context first, like the other kinds."""

from dataclasses import dataclass
from typing import Final

from returns.result import Result, Success
from typing_extensions import assert_type

import hooks
from hooks import AfterPoint, Outcome


@dataclass(frozen=True)
class Doc:
    text: str


@dataclass(frozen=True)
class SearchContext:
    query: str


AFTER_SEARCH: Final = AfterPoint[SearchContext, list[Doc]]("after_search")


class Tagger:
    def after_search(
        self, outcome: Outcome[list[Doc]], ctx: SearchContext
    ) -> Result[list[Doc], Exception]:
        return outcome.map(lambda docs: [*docs, Doc(ctx.query)])


def search(ctx: SearchContext) -> Outcome[list[Doc]]:
    outcome = hooks.run_after([Tagger()], AFTER_SEARCH, Success([Doc("a")]), ctx)
    assert_type(outcome, Outcome[list[Doc]])
    return outcome
