"""``explain``: the chain a dispatch runs, with each callback's tier and match, as text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import final

from hooks._compile import CompiledCallbacks, compile_callbacks
from hooks._dispatch import Callbacks
from hooks._errors import describe
from hooks._placed import Tier
from hooks._points import AnyPoint
from hooks._slots import slot_init
from hooks._tool_info import ToolInfo

__all__ = ["ChainStep", "Explanation", "explain"]


@final
@slot_init
@dataclass(frozen=True, slots=True)
class ChainStep:
    """One callback of an explained chain: its place (from 1), tier, name as messages
    name it, its match (``None``: every call) and whether it is async."""

    position: int
    tier: Tier
    callback: str
    match: str | None
    is_async: bool

    def __str__(self) -> str:
        match = "" if self.match is None else f"  [{self.match}]"
        kind = "async " if self.is_async else ""
        return f"{self.position}. {self.tier:<7} {kind}{self.callback}{match}"


@final
@slot_init
@dataclass(frozen=True, slots=True)
class Explanation:
    """The chain of ``point`` (for the call of ``tool`` when given), in the order it runs.

    ``str()`` draws it, one callback per line."""

    point: str
    tool: str | None
    steps: tuple[ChainStep, ...]

    def __str__(self) -> str:
        head = self.point if self.tool is None else f"{self.point} (tool {self.tool!r})"
        if not self.steps:
            return f"{head}: no callback"
        return "\n".join([f"{head}:", *(f"  {step}" for step in self.steps)])


def explain(
    callbacks: Callbacks, point: AnyPoint, /, *, tool: ToolInfo | None = None
) -> Explanation:
    """The chain ``callbacks`` run at ``point`` -- for a call of ``tool``, when given: the
    callbacks matched to other tools left out -- with each one's tier and match."""
    compiled: CompiledCallbacks = compile_callbacks(callbacks)
    if tool is not None:
        compiled = compiled.for_tool(tool)
    chain = compiled.chain(point.name, point.kind)
    placed = {id(p.callback): p for p in compiled.placed()}
    steps: list[ChainStep] = []
    for position, (owner, is_async) in enumerate(zip(chain.owners, chain.asyncs, strict=True), 1):
        each = placed.get(id(owner))
        match = None if each is None or each.match is None else repr(each.match)
        tier: Tier = "default" if each is None else each.tier
        steps.append(ChainStep(position, tier, describe(owner), match, is_async))
    return Explanation(point.name, None if tool is None else tool.name, tuple(steps))
