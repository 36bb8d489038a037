"""Placing a callback: its tier, the calls it is for, and whom it runs before or after.

``guard(cb)``, ``matched(cb)`` and ``audit(cb)`` wrap a callback in a ``Placed``: a
callbacks list takes it wherever it takes the callback itself, and compiling the list
(``hooks._compile``) reads it once -- nothing is decided per call.

Tiers order every chain: ``guard`` callbacks first (before the runner's, the run's and
the agent's other callbacks alike), then ``default`` in list order, then ``audit``.
``before=`` / ``after=`` order callbacks within a tier. A ``Match`` limits a callback's
tool hooks to the calls it matches (tool names, the MCP server, annotations, the
arguments) and all its hooks to the agents it names.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Generic, Literal, TypeAlias, TypeVar, cast, final, overload

from hooks._async_protocols import AsyncOnEvent
from hooks._errors import Described, InvalidCallbacks, describe
from hooks._protocols import OnEvent
from hooks._tool_info import ToolAnnotations, ToolInfo

__all__ = ["Match", "Placed", "Tier", "audit", "guard", "matched", "shadow"]

CB = TypeVar("CB")

Tier: TypeAlias = Literal["guard", "default", "audit", "shadow"]
"""Where a callback runs at each point: first (``guard``), in list order
(``default``), last and observe-only (``audit``), or beside the chain, its decisions
recorded and never acted on (``shadow``)."""

TIERS: Final[dict[str, int]] = {"guard": 0, "default": 1, "audit": 2, "shadow": 3}

Names: TypeAlias = "str | re.Pattern[str] | Sequence[str | re.Pattern[str]]"
"""Tool or agent names: exact names, ``fnmatch`` globs (``"fs_*"``), or compiled
``re.Pattern``\\ s, which must match the whole name (``fullmatch``)."""

ArgsTest: TypeAlias = Callable[[Mapping[str, Any]], bool]
"""A predicate over a tool call's arguments (``ctx.call.args``)."""

# What an MCP tool that declares nothing means, per the MCP specification's defaults.
_MCP_DEFAULTS: Final = ToolAnnotations(
    read_only=False, destructive=True, idempotent=False, open_world=True
)
_FIELDS: Final = ("read_only", "destructive", "idempotent", "open_world")
_GLOB: Final = re.compile(r"[*?\[]")


@final
class _Name:
    """One name pattern, compiled: an exact name, a glob, or a regex."""

    __slots__ = ("exact", "given", "test")

    def __init__(self, name: str | re.Pattern[str], *, what: str) -> None:
        self.given: Final = name
        given: object = name  # callers without a type checker pass anything
        if isinstance(given, re.Pattern):
            if not isinstance(given.pattern, str):  # pyright: ignore[reportUnknownMemberType]
                msg = f"{what}: a regex must be a str pattern, got {given!r:.60}"
                raise TypeError(msg)
            self.test: Callable[[str], object] = given.fullmatch  # pyright: ignore[reportUnknownMemberType]
            self.exact: str | None = None
        elif isinstance(given, str) and given:
            if _GLOB.search(given):
                self.test = re.compile(fnmatch.translate(given)).fullmatch
                self.exact = None
            else:
                self.test = given.__eq__
                self.exact = given
        else:
            msg = (
                f"{what}: names are non-empty str (exact or glob) or re.Pattern, got {given!r:.60}"
            )
            raise TypeError(msg)

    def __repr__(self) -> str:
        given = self.given
        return repr(given.pattern) if isinstance(given, re.Pattern) else repr(given)


def _names(given: object, what: str) -> tuple[_Name, ...] | None:
    if given is None:
        return None
    items: tuple[object, ...]
    if isinstance(given, str | re.Pattern):
        items = cast("tuple[object, ...]", (given,))
    elif isinstance(given, Sequence):
        items = tuple(cast("Sequence[object]", given))
    else:
        msg = f"{what}: names are a str, a re.Pattern or a list of them, got {given!r:.60}"
        raise TypeError(msg)
    if not items:
        msg = f"{what}: an empty list matches nothing; leave it out to match every one"
        raise ValueError(msg)
    return tuple(_Name(item, what=what) for item in items)  # type: ignore[arg-type]


def _effective(info: ToolInfo, field: str) -> bool | None:
    """A tool's hint as a match compares it: as declared; for an MCP tool, an unsaid hint
    is the MCP default; a read-only tool is never destructive (the MCP specification:
    ``destructiveHint`` means something only when ``readOnlyHint`` is false)."""
    declared = info.annotations
    if field == "destructive" and _effective(info, "read_only") is True:
        return False
    have: bool | None = getattr(declared, field)
    if have is None and info.server is not None:
        have = getattr(_MCP_DEFAULTS, field)
    return have


@final
class Match:
    """Which calls a placed callback is for; each part left ``None`` matches everything.

    ``tools``: the tool's name as the model calls it (an MCP tool also by its own
    name on its server: ``"add"`` matches ``notes_add`` of server ``notes``).
    ``server``: the ``MCPTools`` name(s) the tool comes from. ``annotations``: each
    field that is not ``None`` must equal the tool's -- an MCP tool's unsaid hints
    taking the MCP defaults (not read-only, destructive, not idempotent, open world),
    a function tool's unsaid hints matching neither ``True`` nor ``False``; a read-only
    tool is not destructive. ``args``:
    a predicate over the call's arguments, asked per call. ``agents``: the agents
    (names or globs) whose dispatches the callback sees at any point.
    """

    __slots__ = ("agents", "annotations", "args", "servers", "tools")

    def __init__(
        self,
        *,
        tools: Names | None = None,
        server: str | Sequence[str] | None = None,
        annotations: ToolAnnotations | None = None,
        args: ArgsTest | None = None,
        agents: Names | None = None,
    ) -> None:
        self.tools: Final = _names(tools, "tools")
        self.agents: Final = _names(agents, "agents")
        servers: object = server
        if servers is None:
            self.servers: tuple[str, ...] | None = None
        elif isinstance(servers, str) and servers:
            self.servers = (servers,)
        elif (
            isinstance(servers, Sequence)
            and not isinstance(servers, str)
            and servers
            and all(isinstance(item, str) and item for item in servers)  # pyright: ignore[reportUnknownVariableType]
        ):
            self.servers = tuple(servers)  # pyright: ignore[reportUnknownArgumentType]
        else:
            msg = f"server: an MCPTools name or a non-empty list of them, got {servers!r:.60}"
            raise TypeError(msg)
        marks: object = annotations
        if marks is not None and type(marks) is not ToolAnnotations:
            msg = f"annotations: a ToolAnnotations (the values to match), got {marks!r:.60}"
            raise TypeError(msg)
        if marks is not None and all(getattr(marks, name) is None for name in _FIELDS):
            msg = "annotations: ToolAnnotations() sets no value to match; leave it out"
            raise ValueError(msg)
        self.annotations: Final = annotations
        test: object = args
        if test is not None and not callable(test):
            msg = f"args: a predicate over the call's arguments, got {test!r:.60}"
            raise TypeError(msg)
        self.args: Final = args

    @property
    def scopes_tools(self) -> bool:
        """Whether it limits tool calls (by name, server, annotations or arguments)."""
        return not (
            self.tools is None
            and self.servers is None
            and self.annotations is None
            and self.args is None
        )

    @property
    def static(self) -> bool:
        """Whether it says anything about the tool itself (not only its arguments)."""
        return not (self.tools is None and self.servers is None and self.annotations is None)

    def tool(self, info: ToolInfo, /) -> bool:
        """Whether the tool ``info`` describes is one this match is for (arguments aside)."""
        servers = self.servers
        if servers is not None and info.server not in servers:
            return False
        names = self.tools
        if names is not None:
            name = info.name
            own = None
            if info.server is not None and name.startswith(f"{info.server}_"):
                own = name[len(info.server) + 1 :]
            if not any(p.test(name) or (own is not None and p.test(own)) for p in names):
                return False
        wanted = self.annotations
        if wanted is not None:
            for field in _FIELDS:
                value = getattr(wanted, field)
                if value is not None and _effective(info, field) is not value:
                    return False
        return True

    def agent(self, name: str, /) -> bool:
        """Whether the agent called ``name`` is one this match is for."""
        agents = self.agents
        return agents is None or any(pattern.test(name) for pattern in agents)

    def exact_tools(self) -> tuple[str, ...]:
        """The exact names among ``tools`` (what a did-you-mean compares)."""
        return tuple(p.exact for p in self.tools or () if p.exact is not None)

    def without_tool(self) -> Match | None:
        """This match once its tool is known to match: the arguments' and agents' tests."""
        if self.args is None and self.agents is None:
            return None
        return self._copy(tools=None, servers=None, annotations=None)

    def without_agent(self) -> Match | None:
        """This match once its agent is known to match: the tool's tests."""
        if not self.scopes_tools:
            return None
        return self._copy(agents=None)

    def _copy(self, **changes: object) -> Match:
        copy = object.__new__(Match)
        for name in Match.__slots__:
            object.__setattr__(copy, name, changes.get(name, getattr(self, name)))
        return copy

    def __repr__(self) -> str:
        parts: list[str] = []
        if self.tools is not None:
            parts.append(f"tools={list(self.tools)!r}")
        if self.servers is not None:
            parts.append(f"server={list(self.servers)!r}")
        if self.annotations is not None:
            marks = self.annotations
            shown = ", ".join(
                f"{name}={getattr(marks, name)}"
                for name in _FIELDS
                if getattr(marks, name) is not None
            )
            parts.append(f"annotations=({shown})")
        if self.args is not None:
            parts.append(f"args={getattr(self.args, '__qualname__', repr(self.args))}")
        if self.agents is not None:
            parts.append(f"agents={list(self.agents)!r}")
        return ", ".join(parts)


@final
class Placed(Described, Generic[CB]):
    """A callback with its place: ``tier``, ``match`` (``None``: every call), the
    callbacks it runs ``before`` and ``after``, and whether a match that fits no known
    tool is allowed. Made by ``guard``, ``matched`` and ``audit``; listed like the
    callback itself."""

    __slots__ = ("after", "allow_unmatched", "before", "callback", "match", "tier")

    def __init__(
        self,
        callback: CB,
        tier: Tier,
        match: Match | None,
        *,
        before: Sequence[object] = (),
        after: Sequence[object] = (),
        allow_unmatched: bool = False,
    ) -> None:
        given: object = callback
        if type(given) is Placed:
            msg = (
                f"{describe(cast(object, given))} is placed already: give its tier, match "
                "and order in one call (guard(cb, tools=...), matched(cb, ...))"
            )
            raise InvalidCallbacks(msg, callback=cast(object, given))
        if tier not in TIERS:
            msg = f"a tier is 'guard', 'default', 'audit' or 'shadow', got {tier!r:.60}"
            raise ValueError(msg)
        for label, others in (("before", before), ("after", after)):
            items: object = others
            if isinstance(items, str) or not isinstance(items, Sequence):
                msg = f"{label}= takes a list of callbacks, got {items!r:.60}"
                raise TypeError(msg)
        flag: object = allow_unmatched
        if type(flag) is not bool:
            msg = f"allow_unmatched must be True or False, got {flag!r:.60}"
            raise TypeError(msg)
        self.callback: Final = callback
        self.tier: Final = tier
        self.match: Final = match
        self.before: Final = tuple(_inner(item) for item in before)
        self.after: Final = tuple(_inner(item) for item in after)
        self.allow_unmatched: Final = allow_unmatched

    def with_tier(self, tier: Tier, /) -> Placed[CB]:
        """The same placement in another tier."""
        return Placed(
            self.callback,
            tier,
            self.match,
            before=self.before,
            after=self.after,
            allow_unmatched=self.allow_unmatched,
        )

    def with_match(self, match: Match | None, /) -> Placed[CB]:
        """The same placement with another match (what a list's views keep)."""
        return Placed(
            self.callback,
            self.tier,
            match,
            before=self.before,
            after=self.after,
            allow_unmatched=self.allow_unmatched,
        )

    def _description(self) -> str:
        inner = describe(self.callback)
        extra = "" if self.match is None else f", {self.match!r}"
        return f"{_NAMES[self.tier]}({inner}{extra})"

    def __repr__(self) -> str:
        extra = "" if self.match is None else f", {self.match!r}"
        return f"{_NAMES[self.tier]}({self.callback!r}{extra})"


_NAMES: Final = {"guard": "guard", "default": "matched", "audit": "audit", "shadow": "shadow"}


def _inner(callback: object) -> object:
    return callback.callback if isinstance(callback, Placed) else callback  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def _match(
    tools: Names | None,
    server: str | Sequence[str] | None,
    annotations: ToolAnnotations | None,
    args: ArgsTest | None,
    agents: Names | None,
) -> Match | None:
    if tools is None and server is None and annotations is None and args is None and agents is None:
        return None
    return Match(tools=tools, server=server, annotations=annotations, args=args, agents=agents)


def guard(
    callback: CB,
    /,
    *,
    tools: Names | None = None,
    server: str | Sequence[str] | None = None,
    annotations: ToolAnnotations | None = None,
    args: ArgsTest | None = None,
    agents: Names | None = None,
    before: Sequence[object] = (),
    after: Sequence[object] = (),
    allow_unmatched: bool = False,
) -> Placed[CB]:
    """``callback`` in the guard tier: first at every point it defines, before every
    default-tier callback of the runner, the run and the agent; nothing can precede it
    but another guard. Matching (``tools=`` ...) works as in ``matched``."""
    return Placed(
        callback,
        "guard",
        _match(tools, server, annotations, args, agents),
        before=before,
        after=after,
        allow_unmatched=allow_unmatched,
    )


def matched(
    callback: CB,
    /,
    *,
    tools: Names | None = None,
    server: str | Sequence[str] | None = None,
    annotations: ToolAnnotations | None = None,
    args: ArgsTest | None = None,
    agents: Names | None = None,
    before: Sequence[object] = (),
    after: Sequence[object] = (),
    allow_unmatched: bool = False,
) -> Placed[CB]:
    """``callback`` with its tool hooks limited to the calls it matches (see ``Match``),
    all its hooks to the ``agents`` named; ordered ``before`` / ``after`` the
    callbacks given. A call it does not match costs it nothing: compiled chains leave
    it out. When a run starts, a match that fits none of the runner's known tools is
    ``InvalidCallbacks`` (with a did-you-mean) unless ``allow_unmatched``."""
    return Placed(
        callback,
        "default",
        _match(tools, server, annotations, args, agents),
        before=before,
        after=after,
        allow_unmatched=allow_unmatched,
    )


@overload
def audit(callback: OnEvent, /) -> Placed[OnEvent]: ...
@overload
def audit(callback: AsyncOnEvent, /) -> Placed[AsyncOnEvent]: ...
def audit(callback: OnEvent | AsyncOnEvent, /) -> Placed[Any]:
    """``callback`` in the audit tier: observe-only, told every dispatch's ``HookEvent``
    (halted, paused, rejected and replaced ones included) after every other observer.

    Its only hook is ``on_event(event) -> None``: it has no way to change a run. A
    callback with any other hook is ``InvalidCallbacks``; what its ``on_event`` raises
    (``StopRun`` included) is logged and the run goes on."""
    return Placed(callback, "audit", None)


def shadow(
    callback: CB,
    /,
    *,
    tools: Names | None = None,
    server: str | Sequence[str] | None = None,
    annotations: ToolAnnotations | None = None,
    args: ArgsTest | None = None,
    agents: Names | None = None,
) -> Placed[CB]:
    """``callback`` tried beside the live chain, never acted on: a candidate policy on
    real traffic before it is enforced.

    At each before, after and error point it defines (matched as ``matched`` matches),
    it is given what the live chain was given, after the live chain ran; when its
    decision differs from the live chain's (it would have halted, paused, retried,
    fallen back or replaced what the live chain passed, or the other way round), a run
    records a ``ShadowEvent`` and, traced, a ``hookline.shadow`` span event. What it
    returns is never used and what it raises is recorded, never raised. It cannot wrap
    (its ``call_next`` would run the operation a second time): a wrap method is
    ``InvalidCallbacks``."""
    return Placed(callback, "shadow", _match(tools, server, annotations, args, agents))
