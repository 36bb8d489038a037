"""A user-declared ``BeforePoint`` dispatches with ``run_before`` and ``arun_before``."""

from dataclasses import dataclass
from typing import Final

from typing_extensions import assert_never, assert_type

import hooks
from hooks import BeforePoint, BeforeResult, Cont, Halt


@dataclass(frozen=True)
class Doc:
    text: str


@dataclass(frozen=True)
class RetrievalContext:
    query: str


BEFORE_RETRIEVAL: Final = BeforePoint[RetrievalContext, list[Doc]]("before_retrieval")


class Cache:
    def before_retrieval(self, ctx: RetrievalContext) -> BeforeResult[RetrievalContext, list[Doc]]:
        if ctx.query == "cached":
            return Halt([Doc("from the cache")])
        return Cont(ctx)


class AsyncRewrite:
    async def before_retrieval(
        self, ctx: RetrievalContext
    ) -> BeforeResult[RetrievalContext, list[Doc]]:
        return Cont(RetrievalContext(ctx.query.strip()))


def retrieve(ctx: RetrievalContext) -> list[Doc]:
    result = hooks.run_before([Cache()], BEFORE_RETRIEVAL, ctx)
    assert_type(result, Cont[RetrievalContext] | Halt[list[Doc]])
    checked: BeforeResult[RetrievalContext, list[Doc]] = result
    match checked:
        case Cont(new_ctx):
            return [Doc(new_ctx.query)]
        case Halt(docs):
            assert_type(docs, list[Doc])
            return docs
        case _:
            assert_never(checked)


async def aretrieve(ctx: RetrievalContext) -> list[Doc]:
    result = await hooks.arun_before([AsyncRewrite(), Cache()], BEFORE_RETRIEVAL, ctx)
    assert_type(result, BeforeResult[RetrievalContext, list[Doc]])
    match result:
        case Cont(new_ctx):
            docs: list[Doc] = [Doc(new_ctx.query)]
            return docs
        case Halt(docs):
            return docs
        case _:
            assert_never(result)
