"""Hook points of your own: a retrieval step dispatched like the runner's model calls.

Three declared points, each typed by its context ``C`` and result ``T``::

    before_retrieval(ctx)               -> Cont[RetrievalContext] | Halt[list[Doc]]
    after_retrieval(outcome, ctx)       -> Result[list[Doc], Exception]
    on_retrieval_error(failure, ctx)    -> Retry | Fallback[list[Doc]] | Failure

``Retriever.retrieve`` dispatches them with ``run_before``, ``run_on_error`` and
``run_after`` and takes every result apart with an exhaustive ``match``. The callbacks:
``Rewrite`` cleans the query (``Cont``), ``Cache`` answers a query it has seen
(``Halt``) and remembers new answers (after), ``RecoverIndex`` retries a timeout and
falls back to no documents on any other error.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Protocol, assert_never

from typing_extensions import override

from hooks import (
    AfterPoint,
    BeforePoint,
    BeforeResult,
    Cont,
    ErrorPoint,
    ErrorResult,
    Failure,
    Fallback,
    Halt,
    Outcome,
    Result,
    Retry,
    Success,
    run_after,
    run_before,
    run_on_error,
)


@dataclass(frozen=True)
class Doc:
    """A retrieved document and how well it matched."""

    id: str
    text: str
    score: int = 0


@dataclass(frozen=True)
class RetrievalContext:
    """A retrieval about to run: the query, how many documents, which attempt."""

    query: str
    k: int = 2
    attempt: int = 1


BEFORE_RETRIEVAL: Final = BeforePoint[RetrievalContext, list[Doc]]("before_retrieval")
AFTER_RETRIEVAL: Final = AfterPoint[RetrievalContext, list[Doc]]("after_retrieval")
ON_RETRIEVAL_ERROR: Final = ErrorPoint[RetrievalContext, list[Doc]]("on_retrieval_error")
MAX_ATTEMPTS: Final = 3


# -- one protocol per method, as hooks does for the built-in points


class BeforeRetrieval(Protocol):
    """``before_retrieval``: change the query, or answer without searching."""

    def before_retrieval(
        self, ctx: RetrievalContext, /
    ) -> BeforeResult[RetrievalContext, list[Doc]]: ...


class AfterRetrieval(Protocol):
    """``after_retrieval``: see (or change) what the search found."""

    def after_retrieval(
        self, outcome: Outcome[list[Doc]], ctx: RetrievalContext, /
    ) -> Result[list[Doc], Exception]: ...


class OnRetrievalError(Protocol):
    """``on_retrieval_error``: retry, fall back, or pass the error on."""

    def on_retrieval_error(
        self, failure: Failure[Exception], ctx: RetrievalContext, /
    ) -> ErrorResult[RetrievalContext, list[Doc]]: ...


# -- callbacks


class Rewrite(BeforeRetrieval):
    """Lower-case the query and drop punctuation, so equal questions look equal."""

    @override
    def before_retrieval(
        self, ctx: RetrievalContext, /
    ) -> BeforeResult[RetrievalContext, list[Doc]]:
        query = " ".join(re.findall(r"\w+", ctx.query.lower()))
        return Cont(replace(ctx, query=query))


@dataclass
class Cache(BeforeRetrieval, AfterRetrieval):
    """Answer a query seen before without searching; remember every new answer."""

    docs: dict[str, list[Doc]] = field(default_factory=dict)

    @override
    def before_retrieval(
        self, ctx: RetrievalContext, /
    ) -> BeforeResult[RetrievalContext, list[Doc]]:
        cached = self.docs.get(ctx.query)
        return Cont(ctx) if cached is None else Halt(cached)

    @override
    def after_retrieval(
        self, outcome: Outcome[list[Doc]], ctx: RetrievalContext, /
    ) -> Result[list[Doc], Exception]:
        match outcome:
            case Success(docs):
                self.docs[ctx.query] = docs
            case Failure():
                pass  # nothing to remember
            case _:
                assert_never(outcome)
        return outcome


class RecoverIndex(OnRetrievalError):
    """Retry a timed-out search; answer with no documents on any other error."""

    @override
    def on_retrieval_error(
        self, failure: Failure[Exception], ctx: RetrievalContext, /
    ) -> ErrorResult[RetrievalContext, list[Doc]]:
        if isinstance(failure.failure(), TimeoutError):
            return Retry(ctx)
        return Fallback([])


# -- the retrieval step


@dataclass
class Index:
    """A tiny in-memory index whose first ``timeouts`` searches time out."""

    docs: Sequence[Doc]
    timeouts: int = 1
    searches: int = 0

    def search(self, query: str, k: int) -> list[Doc]:
        """The ``k`` documents sharing most words with ``query``."""
        self.searches += 1
        if self.searches <= self.timeouts:
            msg = "index did not answer in time"
            raise TimeoutError(msg)
        words = set(query.split())
        if not words:
            msg = "empty query"
            raise ValueError(msg)
        scored = [
            replace(doc, score=len(words & set(doc.text.lower().split()))) for doc in self.docs
        ]
        return sorted((doc for doc in scored if doc.score), key=lambda doc: -doc.score)[:k]


@dataclass
class Retriever:
    """Runs the retrieval step with its hook points; ``log`` records the flow."""

    callbacks: Sequence[object]
    index: Index
    log: list[str] = field(default_factory=list)

    def retrieve(self, query: str) -> list[Doc]:
        """``before_retrieval`` -> search (-> ``on_retrieval_error``) -> ``after_retrieval``."""
        decision = run_before(self.callbacks, BEFORE_RETRIEVAL, RetrievalContext(query))
        match decision:
            case Halt(docs):
                self.log.append(f"  before_retrieval -> halt: {_ids(docs)}, search skipped")
                return docs
            case Cont(ctx):
                self.log.append(f"  before_retrieval -> cont: query {ctx.query!r}")
            case _:
                assert_never(decision)
        outcome = run_after(self.callbacks, AFTER_RETRIEVAL, self._search(ctx), ctx)
        match outcome:
            case Success(docs):
                self.log.append(f"  after_retrieval  -> success: {_ids(docs)}")
                return docs
            case Failure(error):
                self.log.append(f"  after_retrieval  -> failure: {error!r}")
                raise error
            case _:
                assert_never(outcome)

    def _search(self, ctx: RetrievalContext) -> Outcome[list[Doc]]:
        while True:
            try:
                docs = self.index.search(ctx.query, ctx.k)
            except Exception as error:  # any error goes to the error hooks, as in the runner
                failure: Failure[Exception] = Failure(error)
                self.log.append(f"  search #{ctx.attempt} raised {type(error).__name__}: {error}")
            else:
                self.log.append(f"  search #{ctx.attempt} -> {_ids(docs)}")
                return Success(docs)
            recovery = run_on_error(self.callbacks, ON_RETRIEVAL_ERROR, failure, ctx)
            match recovery:
                case Retry(retry_ctx) if ctx.attempt < MAX_ATTEMPTS:
                    self.log.append("  on_retrieval_error -> retry")
                    ctx = replace(retry_ctx, attempt=ctx.attempt + 1)
                case Retry():
                    self.log.append("  on_retrieval_error -> retry, but no attempts left")
                    return failure
                case Fallback(docs):
                    self.log.append(f"  on_retrieval_error -> fallback: {_ids(docs)}")
                    return Success(docs)
                case Failure() as passed_on:
                    self.log.append("  on_retrieval_error -> failure")
                    return passed_on
                case _:
                    assert_never(recovery)


def _ids(docs: list[Doc]) -> str:
    return "[" + ", ".join(doc.id for doc in docs) + "]"


DOCS: Final = (
    Doc("points", "hook points name the method each callback defines"),
    Doc("results", "tagged results cont halt retry fallback"),
    Doc("runner", "the runner threads callbacks through every model and tool call"),
)
QUERIES: Final = ("How do HOOK points find callbacks?", "how do hook points find callbacks", "???")


def main() -> None:
    """Retrieve three queries through the declared points and print the flow."""
    retriever = Retriever([Rewrite(), Cache(), RecoverIndex()], Index(DOCS))
    print("custom hook points: before_retrieval, after_retrieval, on_retrieval_error")
    for query in QUERIES:
        retriever.log.append(f"\nretrieve({query!r})")
        docs = retriever.retrieve(query)
        retriever.log.append(f"  -> {[doc.id for doc in docs]}")
    print("\n".join(retriever.log))


if __name__ == "__main__":
    main()
