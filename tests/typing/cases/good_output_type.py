"""``Agent[Deps, Out]``: ``output_type`` and ``deps_type`` type the run's result and deps."""

import dataclasses

from typing_extensions import assert_type

from runner import Agent, RunContext, Runner, RunResult, ScriptedModel


@dataclasses.dataclass
class Invoice:
    number: str
    total: float


@dataclasses.dataclass
class Db:
    url: str


def lookup(ctx: RunContext[Db], key: str) -> str:
    assert_type(ctx.deps, Db)
    return ctx.deps.url + key + ctx.call_id


plain = Agent("plain", ScriptedModel())
assert_type(plain, Agent[None, str])
typed = Agent("typed", ScriptedModel(), output_type=Invoice)
assert_type(typed, Agent[None, Invoice])
with_deps = Agent("deps", ScriptedModel(), tools=[lookup], deps_type=Db)
assert_type(with_deps, Agent[Db, str])
both = Agent("both", ScriptedModel(), tools=[lookup], output_type=Invoice, deps_type=Db)
assert_type(both, Agent[Db, Invoice])


async def use() -> None:
    assert_type(Runner(plain).run("hi"), RunResult[str])
    assert_type(Runner(plain).run("hi").output, str)
    assert_type(Runner(typed).run("hi").output, Invoice)
    assert_type((await Runner(typed).arun("hi")).output, Invoice)
    assert_type(Runner(with_deps).run("hi", deps=Db("db")).output, str)
    assert_type(Runner(both).run("hi", deps=Db("db")).output, Invoice)
    result = Runner(both).run("hi", deps=Db("db"))
    assert_type(Runner(both).resume(result.state, {}, deps=Db("db")), RunResult[Invoice])
    assert_type(await Runner(both).aresume(result.state, {}, deps=Db("db")), RunResult[Invoice])
