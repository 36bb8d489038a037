"""``Agent``: a name, a model, tools, callbacks of its own and sub-agents; its answer's type."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Generic, NoReturn, cast, final, overload

from typing_extensions import TypeVar

from hooks import InvalidCallbacks, ToolInfo, ToolSpec
from runner._checks import got, is_list
from runner._mcp.source import MCPTools
from runner._models.protocols import AsyncModel, Model
from runner._tools.output import FINAL_RESULT, OutputType
from runner._tools.tools import (
    AsyncTool,
    FunctionTool,
    Tool,
    as_tool,
    check_tool_name,
    info_of,
    is_async_tool,
    spec_of,
)

__all__ = ["Agent", "check_deps"]

Deps = TypeVar("Deps", default=None)
Out = TypeVar("Out", default=str)
# The overloads' own: an __init__'s self may not name the class's type variables.
_D = TypeVar("_D")
_O = TypeVar("_O")


@final
class Agent(Generic[Deps, Out]):
    """An agent: what ``Runner`` drives.

    ``tools`` are functions, tool objects or ``MCPTools`` (an MCP server's tools,
    listed when a run first needs them; kept in ``sources``); ``callbacks`` apply to this agent only
    (after the runner's); each of ``sub_agents`` is offered to this agent's model as
    a tool named after it, taking one argument ``request: str``. ``instruction``
    opens every request as a system message.

    ``output_type`` makes the answer a typed value (``RunResult.output``): any type
    pydantic's ``TypeAdapter`` handles (a model, a dataclass, a ``TypedDict``,
    ``list[...]``, a union), asked of the model natively where its API can
    (``native_output``: the model says so with a true ``native_output`` attribute) and as
    a tool named ``final_result`` beside the others where not; ``str`` or ``None`` keeps
    the plain text. It needs ``pip install 'hookline[schema]'``. ``deps_type`` is the type
    of the ``deps`` a run is given (``Runner.run(..., deps=...)``) for the tools that take a
    ``RunContext``: each such tool's ``RunContext[X]`` must accept it (a class ``X``
    that ``deps_type`` is no subclass of is a ``TypeError`` here).

    Inputs are checked here, not in a run: the name is an identifier and a valid
    tool name; ``tools``, ``callbacks`` and ``sub_agents`` are lists or tuples (a
    single callback is ``InvalidCallbacks``, a single tool or sub-agent a
    ``TypeError``); the callbacks themselves are checked when a ``Runner`` compiles
    them. An agent is immutable: setting or deleting an attribute raises
    ``AttributeError``, so a graph of agents can never be rewired into a cycle.
    """

    __slots__ = (
        "callbacks",
        "deps_type",
        "description",
        "infos",
        "instruction",
        "model",
        "model_has_agenerate",
        "model_is_async",
        "name",
        "native_output",
        "output",
        "sources",
        "specs",
        "sub_agents",
        "tool_is_async",
        "tools",
    )

    @overload
    def __init__(
        self: Agent[None, str],
        name: str,
        model: Model | AsyncModel,
        *,
        tools: Sequence[object] = (),
        callbacks: Sequence[object] = (),
        sub_agents: Sequence[Agent[Any, Any]] = (),
        instruction: str = "",
        description: str = "",
        output_type: None = None,
        deps_type: None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[None, _O],
        name: str,
        model: Model | AsyncModel,
        *,
        tools: Sequence[object] = (),
        callbacks: Sequence[object] = (),
        sub_agents: Sequence[Agent[Any, Any]] = (),
        instruction: str = "",
        description: str = "",
        output_type: type[_O],
        deps_type: None = None,
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[_D, str],
        name: str,
        model: Model | AsyncModel,
        *,
        tools: Sequence[object] = (),
        callbacks: Sequence[object] = (),
        sub_agents: Sequence[Agent[Any, Any]] = (),
        instruction: str = "",
        description: str = "",
        output_type: None = None,
        deps_type: type[_D],
    ) -> None: ...
    @overload
    def __init__(
        self: Agent[_D, _O],
        name: str,
        model: Model | AsyncModel,
        *,
        tools: Sequence[object] = (),
        callbacks: Sequence[object] = (),
        sub_agents: Sequence[Agent[Any, Any]] = (),
        instruction: str = "",
        description: str = "",
        output_type: type[_O],
        deps_type: type[_D],
    ) -> None: ...
    def __init__(
        self,
        name: str,
        model: Model | AsyncModel,
        *,
        tools: Sequence[object] = (),
        callbacks: Sequence[object] = (),
        sub_agents: Sequence[Agent[Any, Any]] = (),
        instruction: str = "",
        description: str = "",
        output_type: object = None,
        deps_type: object = None,
    ) -> None:
        _check_name(name)
        if isinstance(model, type) or not callable(getattr(model, "generate", None)):
            hint = f"; pass an instance: {model.__qualname__}()" if isinstance(model, type) else ""
            msg = (
                f"agent {name!r}: a model needs a generate(request) method, got {got(model)}{hint}"
            )
            raise TypeError(msg)
        texts: dict[str, object] = {"instruction": instruction, "description": description}
        for field, text in texts.items():  # untyped callers may pass anything
            if not isinstance(text, str):
                msg = f"agent {name!r}: {field} must be a str, got {got(text)}"
                raise TypeError(msg)
        if not is_list(callbacks):
            msg = (
                f"agent {name!r}: callbacks must be a list or tuple of modules or objects, "
                f"got {type(callbacks).__name__}; wrap a single callback as [callback]"
            )
            raise InvalidCallbacks(msg, callback=callbacks)
        _check_list(name, "tools", tools, "functions or tool objects", "tool")
        _check_list(name, "sub_agents", sub_agents, "Agent instances", "agent")
        self.name: Final = name
        self.model: Final = model
        self.model_is_async: Final = inspect.iscoroutinefunction(model.generate)
        # A sync model may also offer `async def agenerate`: async runs await it instead
        # of sending generate to a thread.
        self.model_has_agenerate: Final = inspect.iscoroutinefunction(
            getattr(model, "agenerate", None)
        )
        # None: the answer is its text.
        self.output: Final = _output_of(name, output_type)
        self.native_output: Final = getattr(model, "native_output", False) is True
        self.deps_type: Final = _checked_deps_type(name, deps_type)
        self.instruction: Final = instruction
        self.description: Final = description or instruction or f"Ask the {name} agent."
        self.callbacks: Final = tuple(callbacks)
        self.sub_agents: Final = tuple(sub_agents)
        sources: list[MCPTools] = []
        functions: dict[str, Tool | AsyncTool] = {}
        for given in tools:
            if isinstance(given, MCPTools):
                if any(given.name == source.name for source in sources):
                    msg = f"agent {name!r} has two MCPTools named {given.name!r}"
                    raise ValueError(msg)
                sources.append(given)
                continue
            tool = as_tool(given)
            _add_unique(functions, tool.name, tool, name)
            if isinstance(tool, FunctionTool):
                _check_deps(name, tool, deps_type)
        # The MCP servers this agent takes tools from: listed by a run, not here.
        self.sources: Final = tuple(sources)
        tools_: dict[str, Tool | AsyncTool | Agent[Any, Any]] = dict(functions)
        for sub in self.sub_agents:
            checked: object = sub  # untyped callers may pass anything
            if not isinstance(checked, Agent):
                msg = f"agent {name!r}: sub_agents must be Agent instances, got {got(sub)}"
                raise TypeError(msg)
            _add_unique(tools_, sub.name, sub, name)
        if self.output is not None and FINAL_RESULT in tools_:
            _refuse_final_result(name)
        # Read-only views: the tables cannot be changed through the agent either.
        self.tools: Final[Mapping[str, Tool | AsyncTool | Agent[Any, Any]]] = (
            types.MappingProxyType(tools_)
        )
        self.tool_is_async: Final[Mapping[str, bool]] = types.MappingProxyType(
            {key: is_async_tool(tool) for key, tool in functions.items()}
        )
        self.specs: Final = tuple(self._spec(tool) for tool in self.tools.values())
        # What each tool call's hooks see as ctx.tool, made once.
        self.infos: Final[Mapping[str, ToolInfo]] = types.MappingProxyType(
            {
                spec.name: ToolInfo(spec.name, None, spec.description)
                if isinstance(tool, Agent)
                else info_of(tool, spec)
                for spec, tool in zip(self.specs, self.tools.values(), strict=True)
            }
        )

    def walk(self) -> Iterator[Agent[Any, Any]]:
        """This agent and all its sub-agents, depth first, each agent once.

        An agent shared by several parents is yielded where the walk first meets it,
        so a graph is walked in time linear in its agents and edges, not its paths;
        the walk keeps its own stack, so no depth of nesting can exhaust Python's.
        """
        seen: set[int] = set()
        stack: list[Agent[Any, Any]] = [self]
        while stack:
            agent = stack.pop()
            if id(agent) in seen:
                continue
            seen.add(id(agent))
            yield agent
            stack.extend(reversed(agent.sub_agents))

    if not TYPE_CHECKING:  # hidden from type checkers, which keep refusing unknown attributes

        def __setattr__(self, name: str, value: object) -> None:
            # Each slot is set once, by __init__; a set slot (or any other name) is refused.
            try:
                object.__getattribute__(self, name)
            except AttributeError:
                if name in Agent.__slots__:
                    object.__setattr__(self, name, value)
                    return
            msg = f"Agent is immutable: cannot set {name!r}; make a new Agent instead"
            raise AttributeError(msg, name=name, obj=self)

        def __delattr__(self, name: str) -> NoReturn:
            msg = f"Agent is immutable: cannot delete {name!r}"
            raise AttributeError(msg, name=name, obj=self)

    def __repr__(self) -> str:
        servers = f", mcp={[source.name for source in self.sources]!r}" if self.sources else ""
        return f"Agent({self.name!r}, tools={list(self.tools)!r}{servers})"

    @staticmethod
    def _spec(tool: Tool | AsyncTool | Agent[Any, Any]) -> ToolSpec:
        if isinstance(tool, Agent):
            parameters: dict[str, Any] = {
                "type": "object",
                "properties": {"request": {"type": "string"}},
                "required": ["request"],
            }
            return ToolSpec(tool.name, tool.description, parameters)
        return spec_of(tool)


def _check_name(name: object) -> None:
    """An agent's name names a tool and a branch: a str, an identifier, a valid tool name."""
    if not isinstance(name, str):
        msg = f"an agent name must be a str (it names a tool and a branch), got {got(name)}"
        raise TypeError(msg)
    if not name.isidentifier():
        msg = f"an agent name must be an identifier (it names a tool and a branch), got {name!r}"
        raise ValueError(msg)
    check_tool_name(name, "agent name")


def _output_of(name: str, output_type: object) -> OutputType[Any] | None:
    """The agent's output type, or ``None`` for a plain text answer (``None`` or ``str``)."""
    if output_type is None or output_type is str:
        return None
    return OutputType(output_type, agent=name)


def _refuse_final_result(name: str) -> NoReturn:
    msg = (
        f"agent {name!r} has an output_type, whose answer may come as a tool named "
        f"{FINAL_RESULT!r}: rename its tool (or sub-agent) {FINAL_RESULT!r}"
    )
    raise ValueError(msg)


def check_deps(root: Agent[Any, Any], deps: object, method: str) -> None:
    """Refuse, before a run starts, ``deps`` that are no instance of the ``deps_type`` class
    an agent of the run declares (``None``, deps not given, included)."""
    for agent in root.walk():
        declared = agent.deps_type
        if declared is None or _is_instance(deps, declared) is not False:
            continue
        name = getattr(declared, "__qualname__", repr(declared))
        if deps is None:
            again = " (a paused run keeps none: give them again)" if "resume" in method else ""
            msg = (
                f"agent {agent.name!r} takes deps of type {name}, but {method} was given "
                f"none: pass {method}(..., deps=...){again}"
            )
        else:
            msg = f"agent {agent.name!r} takes deps of type {name}, got {got(deps)}"
        raise TypeError(msg)


def _checked_deps_type(name: str, deps_type: object) -> object:
    """``deps_type`` itself if it is ``None``, a class or a generic alias or union."""
    if deps_type is None or isinstance(deps_type, type) or typing.get_origin(deps_type):
        return deps_type
    msg = f"agent {name!r}: deps_type must be a type, got {got(deps_type)}"
    raise TypeError(msg)


def _is_instance(value: object, declared: object) -> bool | None:
    """Whether ``value`` is of type ``declared`` (a class, a union, a generic alias by its
    origin: ``list[int]`` as ``list``), or ``None`` when run time cannot tell."""
    origin = typing.get_origin(declared)
    target = declared if origin is None or origin in {typing.Union, types.UnionType} else origin
    try:
        return isinstance(value, cast("Any", target))
    except TypeError:  # Literal, Annotated, a union of generics: only a checker can say
        return None


def _check_deps(agent: str, tool: FunctionTool, deps_type: object) -> None:
    """A tool's ``RunContext[X]`` must accept the agent's ``deps_type`` (a class ``X`` a
    class ``deps_type`` is no subclass of is refused); a bare ``RunContext`` takes any."""
    wanted = tool.deps_type
    if wanted is None or wanted is Any or wanted is object:
        return
    given = type(None) if deps_type is None else deps_type
    if not isinstance(wanted, type) or not isinstance(given, type):
        return  # a type only a checker can compare: mypy and pyright do
    if not issubclass(given, type(None) if wanted is type(None) else wanted):
        has = (
            "declares no deps_type: give it one, Agent(..., deps_type=...)"
            if deps_type is None
            else f"deps_type is {given.__qualname__}"
        )
        msg = (
            f"agent {agent!r}: tool {tool.name!r} takes RunContext[{wanted.__qualname__}], "
            f"but the agent {has}"
        )
        raise TypeError(msg)


def _check_list(agent: str, field: str, value: object, items: str, single: str) -> None:
    if not is_list(value):
        msg = (
            f"agent {agent!r}: {field} must be a list or tuple of {items}, "
            f"got {got(value)}; wrap a single {single} as [{single}]"
        )
        raise TypeError(msg)


def _add_unique(tools: dict[str, Any], key: str, tool: object, agent: str) -> None:
    if key in tools:
        msg = f"agent {agent!r} has two tools (or sub-agents) named {key!r}"
        raise ValueError(msg)
    tools[key] = tool
