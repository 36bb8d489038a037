"""The quickstart's callbacks, unchanged, guarding a LangChain agent.

``python -m examples.langchain_guard`` (needs ``pip install 'hookline[langchain]'``) sends
the quickstart's four messages to a LangChain 1.x agent (``create_agent``) on one thread,
with ``hookline_middleware`` running the quickstart's own ``Guard``, ``RedactEmails``,
``RetryTransient`` and ``Audit``:

- ``Guard`` (``before_agent``) halts the request for a password: the model is not called;
- ``RedactEmails`` (``before_model``) rewrites what the model receives;
- ``RetryTransient`` (``on_tool_error``) retries the weather tool's first, failed call;
- ``Audit`` (``on_event``) is told each dispatch, as in a ``Runner``'s run.

The model is LangChain's ``GenericFakeChatModel`` answering from a script, offline.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

# create_agent's checkpointer parameter is BaseCheckpointSaver[Unknown] in LangChain's types.
from langchain.agents import create_agent  # pyright: ignore[reportUnknownVariableType]
from langchain.agents.middleware import InputAgentState
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver

from examples.quickstart import MESSAGES, Audit, Guard, RedactEmails, RetryTransient, add
from examples.quickstart import flaky_weather as quickstart_weather
from hooks import HookEvent
from runner.adapters.langchain import hookline_middleware


class ScriptedChat(GenericFakeChatModel):
    """``GenericFakeChatModel`` that takes tools (its answers do not depend on them) and
    keeps what it received, so the demo can show what the redaction changed."""

    received: list[list[BaseMessage]] = []  # noqa: RUF012  # pydantic copies the default

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        """The model itself."""
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def script() -> Iterator[AIMessage]:
    """What the model answers, in order, over the four messages (none for the third)."""
    yield AIMessage("", tool_calls=[_call("add", {"a": 2, "b": 3}, "c1")])
    yield AIMessage("It is 5.0.")
    yield AIMessage("", tool_calls=[_call("weather", {"city": "Paris"}, "c2")])
    yield AIMessage("It's 18°C, light rain in Paris.")
    yield AIMessage("Done: the notes went to <email>.")


def _call(name: str, args: dict[str, Any], id_: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": id_, "type": "tool_call"}


@dataclass(frozen=True)
class Demo:
    """The answers, the hook events of each turn, and the model (what it received)."""

    answers: tuple[str, ...]
    events: tuple[tuple[HookEvent, ...], ...]
    model: ScriptedChat


def run_demo() -> Demo:
    """Send ``MESSAGES`` to the LangChain agent on one thread, guarded by the quickstart's
    callbacks."""
    model = ScriptedChat(messages=script())
    weather = StructuredTool.from_function(quickstart_weather(), name="weather")
    answers: list[str] = []
    events: list[tuple[HookEvent, ...]] = []
    config: RunnableConfig = {"configurable": {"thread_id": "demo"}}
    saver = InMemorySaver()  # the thread's history, across the four invocations
    for message in MESSAGES:
        audit = Audit()
        callbacks = [Guard(), RetryTransient(), RedactEmails(), audit]
        agent = create_agent(
            model,
            tools=[StructuredTool.from_function(add), weather],
            middleware=[hookline_middleware(callbacks, name="assistant")],
            checkpointer=saver,
        )
        asked: InputAgentState = {"messages": [HumanMessage(message)]}
        state = agent.invoke(asked, config)  # pyright: ignore[reportUnknownMemberType]
        answers.append(str(state["messages"][-1].content))
        events.append(tuple(audit.events))
    return Demo(tuple(answers), tuple(events), model)


def main() -> None:
    """Print each message, the hook points that decided something, and the answer."""
    demo = run_demo()
    for message, answer, seen in zip(MESSAGES, demo.answers, demo.events, strict=True):
        print(f"> {message}")
        for event in seen:
            if event.callback is not None or event.outcome not in {"cont", "success"}:
                where = f" {event.tool} #{event.attempt}" if event.tool else ""
                print(f"    {event.point}{where}: {event.outcome} ({event.callback})")
        print(f"  {answer}")


if __name__ == "__main__":
    main()
