"""Placing callbacks: ``guard``, ``matched`` and ``audit`` keep the callback's type."""

from typing_extensions import assert_type

import hooks
from hooks import Cont, HookEvent, Placed, ToolAnnotations, ToolContext, audit, guard, matched


class Guard(hooks.BeforeTool):
    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        return Cont(ctx)


class Log:
    def on_event(self, event: HookEvent, /) -> None:
        print(event.point)


class AsyncLog:
    async def on_event(self, event: HookEvent, /) -> None:
        print(event.point)


first = Guard()
assert_type(guard(first, tools="fs_*"), Placed[Guard])
assert_type(
    matched(
        Guard(),
        tools=["search"],
        annotations=ToolAnnotations(destructive=True),
        args=lambda args: "path" in args,
        after=[first],
    ),
    Placed[Guard],
)
callbacks: list[object] = [guard(first), audit(Log()), audit(AsyncLog())]
