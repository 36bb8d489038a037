"""How a compiled list's placed callbacks run: their order, and the gates of matched ones.

``placing`` decides once per compiled list: each callback's tier and match, and the
order every chain of the list follows -- tiers first (``guard``, ``default``,
``audit``), then ``before=`` / ``after=`` within a tier, then list order (a stable
topological sort). A constraint that contradicts the tiers, or a cycle, is
``InvalidCallbacks`` naming the callbacks. ``build_placed`` builds one point's chain in
that order, each matched method behind a gate that hands the call on untouched when it
does not match (``Cont(ctx)``, the outcome, the failure, ``call_next(ctx)``): the form
any dispatch of the list runs. The runner dispatches tool points on a list's view for
the one tool (``CompiledCallbacks.for_tool``), which leaves out the callbacks that do
not match it, so they cost nothing there.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any, Final, final

from hooks._contexts import ToolContext
from hooks._errors import InvalidCallbacks, describe
from hooks._placed import TIERS, Match, Placed, Tier
from hooks._points import first_declared, known_points
from hooks._results import Cont
from hooks._tool_info import ToolInfo
from hooks._validate import Fn

__all__ = ["Placing", "build_placed", "placing"]

Member = Callable[[int, str, str], "tuple[Fn, bool] | None"]


@final
class Placing:
    """The placed callbacks of one compiled list (``None`` where a callback is not),
    the order of its chains, and what its matches need."""

    __slots__ = ("by_agent", "by_tool", "order", "placed")

    def __init__(self, placed: tuple[Placed[object] | None, ...], order: tuple[int, ...]) -> None:
        self.placed: Final = placed
        self.order: Final = order
        matches = [p.match for p in placed if p is not None and p.match is not None]
        self.by_agent: Final = any(match.agents is not None for match in matches)
        self.by_tool: Final = any(match.scopes_tools for match in matches)

    def tier(self, index: int) -> Tier:
        """The tier of the ``index``-th callback."""
        placed = self.placed[index]
        return "default" if placed is None else placed.tier


def placing(callbacks: tuple[object, ...], inner: tuple[object, ...]) -> Placing:
    """Decide how ``callbacks`` (``inner``: themselves, unwrapped) are placed."""
    placed = tuple(map(_placed, callbacks))
    for each, callback in zip(placed, inner, strict=True):
        if each is not None and each.tier == "audit":
            _check_audit(each, callback)
        elif each is not None and each.tier == "shadow":
            _check_shadow(each, callback)
    return Placing(placed, _order(placed, inner))


def _placed(callback: object) -> Placed[object] | None:
    if type(callback) is Placed:
        each: Placed[object] = callback  # pyright: ignore[reportUnknownVariableType]
        return each
    return None


def _check_audit(placed: Placed[object], callback: object) -> None:
    hooks = [name for name in known_points() if name != "on_event" and hasattr(callback, name)]
    if hooks:
        msg = (
            f"{describe(placed)}: an audit callback only observes (on_event); "
            f"it has {', '.join(hooks)}, which could change a run: "
            "list it as a guard or a default-tier callback instead"
        )
        raise InvalidCallbacks(msg, callback=callback, attribute=hooks[0])


def _check_shadow(placed: Placed[object], callback: object) -> None:
    points = known_points()
    wraps = [name for name, kind in points.items() if kind == "wrap" and hasattr(callback, name)]
    if wraps:
        msg = (
            f"{describe(placed)}: a shadow cannot wrap ({', '.join(wraps)}): its call_next "
            "would run the operation a second time; shadow the before and after hooks"
        )
        raise InvalidCallbacks(msg, callback=callback, attribute=wraps[0])


def _order(placed: tuple[Placed[object] | None, ...], inner: tuple[object, ...]) -> tuple[int, ...]:
    """The indices of ``inner`` in the order its chains follow."""
    rank = [1 if p is None else TIERS[p.tier] for p in placed]
    after = _constraints(placed, inner, rank)  # index -> the indices it waits for
    size = len(inner)
    waiting = [len(each) for each in after]
    then_of: list[list[int]] = [[] for _ in range(size)]
    for index, firsts in enumerate(after):
        for first in firsts:
            then_of[first].append(index)
    ready = [(rank[index], index) for index in range(size) if not waiting[index]]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        _, index = heapq.heappop(ready)
        order.append(index)
        for then in then_of[index]:
            waiting[then] -= 1
            if not waiting[then]:
                heapq.heappush(ready, (rank[then], then))
    if len(order) < size:
        left = [index for index in range(size) if waiting[index]]
        cycle = " -> ".join(_named(placed, inner, index) for index in _cycle(after, left))
        msg = f"before=/after= constraints form a cycle: {cycle}"
        raise InvalidCallbacks(msg, callback=inner[left[0]])
    return tuple(order)


def _constraints(
    placed: tuple[Placed[object] | None, ...], inner: tuple[object, ...], rank: list[int]
) -> list[set[int]]:
    """Per index, the indices ``before=`` / ``after=`` make it wait for (within its tier:
    the tiers order the rest); refused when they contradict the tiers."""
    where: dict[int, list[int]] = {}
    for index, callback in enumerate(inner):
        where.setdefault(id(callback), []).append(index)
    after: list[set[int]] = [set() for _ in inner]
    for index, each in enumerate(placed):
        if each is None:
            continue
        pairs = [(index, other) for target in each.before for other in where.get(id(target), ())]
        pairs += [(other, index) for target in each.after for other in where.get(id(target), ())]
        for first, then in pairs:
            if rank[first] > rank[then]:
                msg = (
                    f"{describe(each)} asks {_named(placed, inner, first)} to run "
                    f"before {_named(placed, inner, then)}, but tiers run guard, then default, "
                    "then audit: drop the constraint or change a tier"
                )
                raise InvalidCallbacks(msg, callback=inner[index])
            if first == then:
                msg = f"{describe(each)} is asked to run before itself"
                raise InvalidCallbacks(msg, callback=inner[index])
            if rank[first] == rank[then]:
                after[then].add(first)
    return after


def _cycle(after: list[set[int]], left: list[int]) -> list[int]:
    """One cycle among ``left`` (each waits for another of them), first node repeated."""
    pending = set(left)
    path: list[int] = [left[0]]
    seen = {left[0]: 0}
    while True:
        step = min(first for first in after[path[-1]] if first in pending)
        if step in seen:
            loop = path[seen[step] :]
            return [*reversed(loop), loop[-1]]  # in run order: who comes first, first
        seen[step] = len(path)
        path.append(step)


def _named(placed: tuple[Placed[object] | None, ...], inner: tuple[object, ...], index: int) -> str:
    each = placed[index]
    return describe(inner[index] if each is None else each)


def build_placed(
    placing: Placing, inner: tuple[object, ...], name: str, kind: str, member: Member
) -> tuple[tuple[object, ...], tuple[Fn, ...], tuple[bool, ...]]:
    """The owners, methods and async flags of the point ``name`` in placed order, each
    matched method behind its gate."""
    point = first_declared(name)
    context = None if point is None else point.context
    tool_point = context is not None and issubclass(context, ToolContext)
    owners: list[object] = []
    fns: list[Fn] = []
    asyncs: list[bool] = []
    for index in placing.order:
        placed = placing.placed[index]
        if placed is not None and placed.tier == "shadow":
            continue  # beside the chain, never in it: see CompiledCallbacks.shadows
        found = member(index, name, kind)
        if found is None:
            continue
        fn, is_async = found
        if placed is not None and placed.match is not None:
            test = _test(placed.match, tool_point=tool_point, kind=kind)
            if test is not None:
                fn = _gate(fn, kind, is_async, test)
        owners.append(inner[index])
        fns.append(fn)
        asyncs.append(is_async)
    return tuple(owners), tuple(fns), tuple(asyncs)


def _test(match: Match, *, tool_point: bool, kind: str) -> Callable[[Any], bool] | None:
    """What a gate asks of the context (of the event, at ``on_event``); ``None``: nothing."""
    agent = match.agent if match.agents is not None else None
    if kind == "event":
        if agent is None:
            return None
        return lambda event: agent(event.agent)
    tool = _call_test(match) if tool_point and match.scopes_tools else None
    if agent is None:
        return tool
    if tool is None:
        return lambda ctx: _agent_of(ctx, agent)
    return lambda ctx: _agent_of(ctx, agent) and tool(ctx)


def _agent_of(ctx: object, agent: Callable[[str], bool]) -> bool:
    invocation: Any = getattr(ctx, "invocation", None)
    return invocation is None or agent(invocation.agent)


def _call_test(match: Match) -> Callable[[Any], bool]:
    args = match.args
    if not match.static:
        assert args is not None  # a match that scopes tools without the tool tests the args
        return lambda ctx: bool(args(ctx.call.args))
    tool = _remembered(match)
    if args is None:
        return lambda ctx: tool(ctx.tool)
    return lambda ctx: tool(ctx.tool) and bool(args(ctx.call.args))


_REMEMBERED: Final = 256  # tools a gate keeps its answer for; past it, it starts over


def _remembered(match: Match) -> Callable[[ToolInfo], bool]:
    """``match.tool``, its answer kept per ``ToolInfo`` object (held, so its id stays its
    own): a gate asks once per tool, then looks it up."""
    known: dict[int, tuple[ToolInfo, bool]] = {}
    fits = match.tool

    def tool(info: ToolInfo) -> bool:
        found = known.get(id(info))
        if found is not None:
            return found[1]
        answer = fits(info)
        if len(known) >= _REMEMBERED:
            known.clear()
        known[id(info)] = (info, answer)
        return answer

    return tool


def _gate(fn: Fn, kind: str, is_async: bool, test: Callable[[Any], bool]) -> Fn:
    """``fn`` asked only when ``test`` passes; otherwise the call is handed on as it came."""
    make = _GATES.get((kind, is_async)) or _GATES["before", is_async]
    gated: Fn = make(fn, test)
    return gated


def _before(method: Any, test: Callable[[Any], bool]) -> Any:
    def gated(ctx: Any, /) -> Any:
        return method(ctx) if test(ctx) else Cont(ctx)

    return gated


def _abefore(method: Any, test: Callable[[Any], bool]) -> Any:
    async def gated(ctx: Any, /) -> Any:
        return await method(ctx) if test(ctx) else Cont(ctx)

    return gated


def _after(method: Any, test: Callable[[Any], bool]) -> Any:
    def gated(given: Any, ctx: Any, /) -> Any:
        return method(given, ctx) if test(ctx) else given

    return gated


def _aafter(method: Any, test: Callable[[Any], bool]) -> Any:
    async def gated(given: Any, ctx: Any, /) -> Any:
        return await method(given, ctx) if test(ctx) else given

    return gated


def _wrap(method: Any, test: Callable[[Any], bool]) -> Any:
    def gated(ctx: Any, call_next: Any, /) -> Any:
        return method(ctx, call_next) if test(ctx) else call_next(ctx)

    return gated


def _awrap(method: Any, test: Callable[[Any], bool]) -> Any:
    async def gated(ctx: Any, call_next: Any, /) -> Any:
        return await (method(ctx, call_next) if test(ctx) else call_next(ctx))

    return gated


def _event(method: Any, test: Callable[[Any], bool]) -> Any:
    def gated(event: Any, /) -> None:
        if test(event):
            method(event)

    return gated


def _aevent(method: Any, test: Callable[[Any], bool]) -> Any:
    async def gated(event: Any, /) -> None:
        if test(event):
            await method(event)

    return gated


# (kind, is_async) -> the gate's maker; a point of any other kind hands on as before does.
_GATES: Final[dict[tuple[str, bool], Callable[[Any, Callable[[Any], bool]], Any]]] = {
    ("before", False): _before,
    ("before", True): _abefore,
    ("after", False): _after,
    ("after", True): _aafter,
    ("error", False): _after,
    ("error", True): _aafter,
    ("wrap", False): _wrap,
    ("wrap", True): _awrap,
    ("event", False): _event,
    ("event", True): _aevent,
}
