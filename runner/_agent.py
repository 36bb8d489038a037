"""``Agent``: a name, a model, tools, callbacks of its own and sub-agents."""

from __future__ import annotations

import inspect
import types
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NoReturn, final

from hooks import InvalidCallbacks, ToolInfo, ToolSpec
from runner._checks import got, is_list
from runner._mcp.source import MCPTools
from runner._models.protocols import AsyncModel, Model
from runner._tools.tools import (
    AsyncTool,
    Tool,
    as_tool,
    check_tool_name,
    info_of,
    is_async_tool,
    spec_of,
)

__all__ = ["Agent"]


@final
class Agent:
    """An agent: what ``Runner`` drives.

    ``tools`` are functions, tool objects or ``MCPTools`` (an MCP server's tools,
    listed when a run first needs them; kept in ``sources``); ``callbacks`` apply to this agent only
    (after the runner's); each of ``sub_agents`` is offered to this agent's model as
    a tool named after it, taking one argument ``request: str``. ``instruction``
    opens every request as a system message.

    Inputs are checked here, not in a run: the name is an identifier and a valid
    tool name; ``tools``, ``callbacks`` and ``sub_agents`` are lists or tuples (a
    single callback is ``InvalidCallbacks``, a single tool or sub-agent a
    ``TypeError``); the callbacks themselves are checked when a ``Runner`` compiles
    them. An agent is immutable: setting or deleting an attribute raises
    ``AttributeError``, so a graph of agents can never be rewired into a cycle.
    """

    __slots__ = (
        "callbacks",
        "description",
        "infos",
        "instruction",
        "model",
        "model_has_agenerate",
        "model_is_async",
        "name",
        "sources",
        "specs",
        "sub_agents",
        "tool_is_async",
        "tools",
    )

    def __init__(
        self,
        name: str,
        model: Model | AsyncModel,
        *,
        tools: Sequence[object] = (),
        callbacks: Sequence[object] = (),
        sub_agents: Sequence[Agent] = (),
        instruction: str = "",
        description: str = "",
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
        # The MCP servers this agent takes tools from: listed by a run, not here.
        self.sources: Final = tuple(sources)
        tools_: dict[str, Tool | AsyncTool | Agent] = dict(functions)
        for sub in self.sub_agents:
            checked: object = sub  # untyped callers may pass anything
            if not isinstance(checked, Agent):
                msg = f"agent {name!r}: sub_agents must be Agent instances, got {got(sub)}"
                raise TypeError(msg)
            _add_unique(tools_, sub.name, sub, name)
        # Read-only views: the tables cannot be changed through the agent either.
        self.tools: Final[Mapping[str, Tool | AsyncTool | Agent]] = types.MappingProxyType(tools_)
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

    def walk(self) -> Iterator[Agent]:
        """This agent and all its sub-agents, depth first, each agent once.

        An agent shared by several parents is yielded where the walk first meets it,
        so a graph is walked in time linear in its agents and edges, not its paths;
        the walk keeps its own stack, so no depth of nesting can exhaust Python's.
        """
        seen: set[int] = set()
        stack: list[Agent] = [self]
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
    def _spec(tool: Tool | AsyncTool | Agent) -> ToolSpec:
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
