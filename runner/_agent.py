"""``Agent``: a name, a model, tools, callbacks of its own and sub-agents."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any, Final, final

from hooks import ToolSpec
from runner._model import AsyncModel, Model
from runner._tools import AsyncTool, Tool, as_tool, is_async_tool, spec_of

__all__ = ["Agent"]


@final
class Agent:
    """An agent: what ``Runner`` drives.

    ``tools`` are functions or tool objects; ``callbacks`` apply to this agent only
    (after the runner's); each of ``sub_agents`` is offered to this agent's model as
    a tool named after it, taking one argument ``request: str``. ``instruction``
    opens every request as a system message.
    """

    __slots__ = (
        "callbacks",
        "description",
        "instruction",
        "model",
        "model_is_async",
        "name",
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
        tools: Iterable[object] = (),
        callbacks: Iterable[object] = (),
        sub_agents: Iterable[Agent] = (),
        instruction: str = "",
        description: str = "",
    ) -> None:
        if not name.isidentifier():
            msg = (
                f"an agent name must be an identifier (it names a tool and a branch), got {name!r}"
            )
            raise ValueError(msg)
        if not callable(getattr(model, "generate", None)):
            msg = f"agent {name!r}: a model needs a generate(request) method, got {model!r:.60}"
            raise TypeError(msg)
        self.name: Final = name
        self.model: Final = model
        self.model_is_async: Final = inspect.iscoroutinefunction(model.generate)
        self.instruction: Final = instruction
        self.description: Final = description or instruction or f"Ask the {name} agent."
        self.callbacks: Final = tuple(callbacks)
        self.sub_agents: Final = tuple(sub_agents)
        functions: dict[str, Tool | AsyncTool] = {}
        for tool in map(as_tool, tools):
            _add_unique(functions, tool.name, tool, name)
        tools_: dict[str, Tool | AsyncTool | Agent] = dict(functions)
        for sub in self.sub_agents:
            checked: object = sub  # untyped callers may pass anything
            if not isinstance(checked, Agent):
                msg = f"agent {name!r}: sub_agents must be Agent instances, got {sub!r:.60}"
                raise TypeError(msg)
            _add_unique(tools_, sub.name, sub, name)
        self.tools: Final[Mapping[str, Tool | AsyncTool | Agent]] = tools_
        self.tool_is_async: Final = {key: is_async_tool(tool) for key, tool in functions.items()}
        self.specs: Final = tuple(self._spec(tool) for tool in self.tools.values())

    def walk(self) -> Iterable[Agent]:
        """This agent and all its sub-agents, depth first."""
        yield self
        for sub in self.sub_agents:
            yield from sub.walk()

    def __repr__(self) -> str:
        return f"Agent({self.name!r}, tools={list(self.tools)!r})"

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


def _add_unique(tools: dict[str, Any], key: str, tool: object, agent: str) -> None:
    if key in tools:
        msg = f"agent {agent!r} has two tools (or sub-agents) named {key!r}"
        raise ValueError(msg)
    tools[key] = tool
