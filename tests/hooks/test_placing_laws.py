"""Laws of placing: a matched chain is the unmatched chain filtered by the match, and the
tiers' order holds for any registration order (hypothesis)."""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import given
from hypothesis import strategies as st

from hooks import (
    BEFORE_TOOL,
    Cont,
    Invocation,
    Tier,
    ToolCall,
    ToolContext,
    ToolInfo,
    compile_callbacks,
    explain,
    guard,
    matched,
    run_before,
)
from hooks import audit as audit_tier

TOOLS = ("search", "delete", "fs_read", "fs_write")


class Seen:
    """A before_tool that records its number, and an on_event for audit-tier copies."""

    def __init__(self, number: int, log: list[int]) -> None:
        self.number = number
        self.log = log

    def before_tool(self, ctx: ToolContext, /) -> Cont[ToolContext]:
        self.log.append(self.number)
        return Cont(ctx)


class Watch:
    def on_event(self, event: object, /) -> None:
        del event


def context(tool: str) -> ToolContext:
    return ToolContext(
        Invocation("r", "a", "a", tools={name: ToolInfo(name) for name in TOOLS}),
        ToolCall("c", tool, {"n": len(tool)}),
    )


patterns = st.lists(st.sampled_from([*TOOLS, "fs_*", "*e*"]), min_size=1, max_size=2)


@given(
    st.lists(st.one_of(st.none(), patterns), min_size=1, max_size=8),
    st.sampled_from(TOOLS),
    st.booleans(),
)
def test_a_matched_chain_is_the_plain_chain_filtered(
    matches: list[list[str] | None], tool: str, use_view: bool
) -> None:
    log: list[int] = []
    plain = [Seen(n, log) for n in range(len(matches))]
    placed: list[object] = [
        cb if names is None else matched(cb, tools=names, allow_unmatched=True)
        for cb, names in zip(plain, matches, strict=True)
    ]
    ctx = context(tool)
    compiled = compile_callbacks(placed)
    if use_view:
        compiled = compiled.for_tool(ctx.tool)
    assert run_before(compiled, BEFORE_TOOL, ctx) == Cont(ctx)
    expected = [
        n
        for n, names in enumerate(matches)
        if names is None or any(fnmatchcase(tool, name) for name in names)
    ]
    assert log == expected


tiers = st.sampled_from(["guard", "default", "audit"])


@given(st.lists(tiers, min_size=1, max_size=10))
def test_tiers_order_holds_for_any_registration_order(order: list[Tier]) -> None:
    log: list[int] = []
    callbacks: list[object] = []
    for n, tier in enumerate(order):
        if tier == "guard":
            callbacks.append(guard(Seen(n, log)))
        elif tier == "default":
            callbacks.append(Seen(n, log))
        else:
            callbacks.append(audit_tier(Watch()))
    steps = explain(callbacks, BEFORE_TOOL).steps
    ranks = {"guard": 0, "default": 1, "audit": 2}
    assert [ranks[step.tier] for step in steps] == sorted(ranks[step.tier] for step in steps)
    ctx = context("search")
    run_before(callbacks, BEFORE_TOOL, ctx)
    guards = [n for n, tier in enumerate(order) if tier == "guard"]
    defaults = [n for n, tier in enumerate(order) if tier == "default"]
    assert log == guards + defaults  # each tier in list order, guards first
