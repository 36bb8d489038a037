"""Tests of the runner's parts: ScriptedModel and Rule, FunctionTool and as_tool, RetryPolicy,
Agent, the Runner's lifecycle and misuse, InMemorySessions."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pytest

from hooks import BeforeAgent, BeforeResult, Cont, HookError, InvalidCallbacks
from runner import (
    Agent,
    AgentContext,
    FunctionTool,
    InMemorySessions,
    Message,
    ModelRequest,
    ModelResponse,
    RetryPolicy,
    Rule,
    Runner,
    RunnerError,
    ScriptedModel,
    ScriptExhausted,
    ToolArgumentsError,
    ToolCall,
    ToolResultEvent,
    ToolSpec,
    as_tool,
)
from tests import runner_helpers
from tests.runner_helpers import AsyncScripted, Mode, add, calling, drive, events_of

if TYPE_CHECKING:
    Undefined = int  # only the type checker can resolve it

mode = runner_helpers.mode


def request(*messages: Message) -> ModelRequest:
    """A request of ``messages``."""
    return ModelRequest(messages)


def user(content: str) -> ModelRequest:
    """A request whose last message is the user's ``content``."""
    return request(Message("user", content))


# -- ScriptedModel and Rule ---------------------------------------------------------


def test_script_items_answer_in_order() -> None:
    """Responses are returned, strings become text answers, exceptions are raised."""
    response = ModelResponse("first", (ToolCall("x", "add", {"a": 1, "b": 2}),))
    error = ConnectionError("down")
    model = ScriptedModel([response, "second", error, "third"])
    assert model.generate(user("1")) is response
    assert model.generate(user("2")) == ModelResponse("second")
    with pytest.raises(ConnectionError) as info:
        model.generate(user("3"))
    assert info.value is error
    assert model.generate(user("4")) == ModelResponse("third")
    assert [r.messages[0].content for r in model.requests] == ["1", "2", "3", "4"]


def test_script_exhausted_names_the_call() -> None:
    """A model with nothing left raises ``ScriptExhausted`` with the call's number."""
    model = ScriptedModel(["only"])
    model.generate(user("a"))
    with pytest.raises(ScriptExhausted, match="call 2") as info:
        model.generate(user("b"))
    assert info.value.call == 2
    assert isinstance(info.value, RunnerError)
    assert isinstance(info.value, LookupError)
    assert isinstance(info.value, HookError)


def test_default_answers_once_script_and_rules_are_done() -> None:
    """``default`` answers whatever the script and the rules do not."""
    model = ScriptedModel(["scripted"], rules=[Rule("weather", reply="sunny")], default="hmm")
    assert model.generate(user("weather?")).text == "scripted"
    assert model.generate(user("weather?")).text == "sunny"
    assert model.generate(user("news?")).text == "hmm"


def test_user_rules_format_groups_into_reply_and_args() -> None:
    """Reply and args are templates over ``{0}``, ``{1}``, named groups and ``{content}``."""
    model = ScriptedModel(
        rules=[
            Rule(
                r"add (\d+) and (?P<second>\d+)",
                reply="{0} -> {1}+{second} ({content})",
                tool="add",
                args={"a": "{1}", "b": "{second}"},
            )
        ]
    )
    response = model.generate(user("please ADD 2 and 3"))
    assert response.text == "ADD 2 and 3 -> 2+3 (please ADD 2 and 3)"
    assert response.tool_calls == (ToolCall("call_1", "add", {"a": 2, "b": 3}),)


@pytest.mark.parametrize(
    ("template", "value"),
    [
        ("2", 2),
        ("2.5", 2.5),
        ("true", True),
        ("null", None),
        ('["x", 1]', ["x", 1]),
        ('"quoted"', "quoted"),
        ("plain words", "plain words"),
    ],
)
def test_rule_args_that_read_as_json_are_parsed(template: str, value: object) -> None:
    """An argument that reads as JSON is parsed; anything else stays a string."""
    model = ScriptedModel(rules=[Rule(".*", tool="t", args={"v": template})])
    [call] = model.generate(user("go")).tool_calls
    assert call.args == {"v": value}


def test_tool_rules_answer_tool_results_only() -> None:
    """``on="tool"`` rules match the last tool result; user rules match the last user message."""
    model = ScriptedModel(
        rules=[
            Rule("sum", reply="user rule"),
            Rule(r"(\d+)", on="tool", reply="the sum is {1}"),
        ],
        default="nothing matched",
    )
    tool_result = request(Message("user", "sum?"), Message("tool", "5", tool_call_id="c1"))
    assert model.generate(tool_result).text == "the sum is 5"
    assert model.generate(user("sum?")).text == "user rule"
    assert model.generate(user("5")).text == "nothing matched"


def test_rules_ignore_requests_not_ending_in_user_or_tool_messages() -> None:
    """A conversation ending in an assistant or system message matches no rule."""
    model = ScriptedModel(rules=[Rule(".*", reply="matched")], default="default")
    assert model.generate(request(Message("assistant", "x"))).text == "default"
    assert model.generate(request(Message("system", "x"))).text == "default"
    assert model.generate(request()).text == "default"


def test_first_matching_rule_wins() -> None:
    """Rules are tried in order."""
    model = ScriptedModel(rules=[Rule("a", reply="first"), Rule("ab", reply="second")])
    assert model.generate(user("ab")).text == "first"


def test_rule_respond_returns_none_without_a_match() -> None:
    """``Rule.respond`` answers ``None`` when its pattern does not match."""
    rule = Rule("hello", reply="hi")
    assert rule.respond("goodbye", "c1") is None
    assert rule.respond("HELLO there", "c1") == ModelResponse("hi")


def test_call_ids_are_unique_per_model() -> None:
    """Each generated call gets a new id."""
    model = ScriptedModel(rules=[Rule(".*", tool="t")])
    ids = [model.generate(user("x")).tool_calls[0].id for _ in range(3)]
    assert ids == ["call_1", "call_2", "call_3"]


def test_rules_drive_a_whole_run(mode: Mode) -> None:
    """A rule-driven model calls a tool, then answers from the tool's result."""
    model = ScriptedModel(
        rules=[
            Rule(r"add (\d+) and (\d+)", tool="add", args={"a": "{1}", "b": "{2}"}),
            Rule(".*", on="tool", reply="The sum is {content}."),
        ]
    )
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = drive(runner, mode, "add 2 and 3")
    assert result.output == "The sum is 5."


def test_scripted_model_is_thread_safe() -> None:
    """Concurrent callers each get a distinct scripted answer."""
    model = ScriptedModel([str(n) for n in range(200)])
    answers: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(50):
            text = model.generate(user("x")).text
            with lock:
                answers.append(text)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers, key=int) == [str(n) for n in range(200)]
    assert len(model.requests) == 200


# -- FunctionTool and as_tool -------------------------------------------------------


def search(
    query: str,
    limit: int,
    *,
    ratio: float = 0.5,
    exact: bool = False,
    tags: list[str] = [],  # noqa: B006 -- never mutated; shows a defaulted array
    filters: dict[str, str] | None = None,
    anything: Any = None,
) -> list[str]:
    """Search the index for ``query``.

    Returns at most ``limit`` hits.
    """
    return [query] * limit


def test_function_tool_reads_name_description_and_schema() -> None:
    """Name from the function, description from the docstring's first paragraph, JSON schema."""
    tool = FunctionTool(search)
    assert tool.name == "search"
    assert tool.description == "Search the index for ``query``."
    assert tool.parameters == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "ratio": {"type": "number"},
            "exact": {"type": "boolean"},
            "tags": {"type": "array"},
            "filters": {},
            "anything": {},
        },
        "required": ["query", "limit"],
    }
    assert tool.spec() == ToolSpec("search", tool.description, tool.parameters)
    assert not tool.is_async


def test_function_tool_schema_leaves_out_star_parameters() -> None:
    """``*args`` and ``**kwargs`` are not in the schema; extra keywords reach ``**kwargs``."""

    def fmt(template: str, *args: str, **kwargs: str) -> str:
        """Format ``template``."""
        return template.format(*args, **kwargs)

    tool = FunctionTool(fmt)
    assert tool.parameters == {
        "type": "object",
        "properties": {"template": {"type": "string"}},
        "required": ["template"],
    }
    assert tool.run({"template": "{who}!", "who": "Ada"}) == "Ada!"


def test_function_tool_name_and_description_can_be_given() -> None:
    """``name`` and ``description`` override what the function says."""
    tool = FunctionTool(add, name="plus", description="Sum two numbers.")
    assert (tool.name, tool.description) == ("plus", "Sum two numbers.")
    agent = Agent("assistant", ScriptedModel(), tools=[tool])
    assert [spec.name for spec in agent.specs] == ["plus"]


def test_function_tool_joins_a_wrapped_first_paragraph() -> None:
    """A docstring summary spread over lines becomes one line; no docstring is ``""``."""

    def wrapped() -> None:
        """First line
        continues here.

        Body.
        """

    def bare() -> None:
        pass

    assert FunctionTool(wrapped).description == "First line continues here."
    assert FunctionTool(bare).description == ""


def test_function_tool_checks_and_calls_with_keywords() -> None:
    """``run`` checks the args then calls the function with them as keywords."""
    tool = FunctionTool(search)
    assert tool.run({"query": "q", "limit": 2, "ratio": 1}) == ["q", "q"]
    tool.check({"query": "q", "limit": 1, "exact": True, "tags": ["a"], "filters": None})


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"query": "q"}, "missing a required argument: 'limit'"),
        ({"query": "q", "limit": 1, "page": 2}, "got an unexpected keyword argument 'page'"),
        ({"query": 1, "limit": 1}, "'query' must be string, got int"),
        ({"query": "q", "limit": 1.5}, "'limit' must be integer, got float"),
        ({"query": "q", "limit": True}, "'limit' must be integer, got bool"),
        ({"query": "q", "limit": 1, "ratio": False}, "'ratio' must be number, got bool"),
        ({"query": "q", "limit": 1, "exact": 1}, "'exact' must be boolean, got int"),
        ({"query": "q", "limit": 1, "tags": "a"}, "'tags' must be array, got str"),
        (["q", 1], "arguments must be a JSON object"),
    ],
)
def test_function_tool_rejects_args_that_do_not_fit(args: Any, problem: str) -> None:
    """Missing, extra or wrongly typed args raise ``ToolArgumentsError`` before any call."""
    tool = FunctionTool(search)
    with pytest.raises(ToolArgumentsError) as info:
        tool.run(args)
    assert info.value.problem == problem
    assert info.value.name == "search"
    assert info.value.args_given == args
    assert isinstance(info.value, TypeError)
    assert isinstance(info.value, RunnerError)


def test_function_tool_without_resolvable_hints_checks_names_only() -> None:
    """Annotations that cannot be resolved leave the arguments untyped."""

    def odd(x: Undefined) -> str:
        """Odd."""
        return str(x)

    tool = FunctionTool(odd)
    assert tool.parameters == {"type": "object", "properties": {"x": {}}, "required": ["x"]}
    assert tool.run({"x": "anything"}) == "anything"


def test_async_function_tools_are_async() -> None:
    """An ``async def`` becomes an async tool whose ``run`` gives a coroutine."""

    async def fetch(url: str) -> str:
        """Fetch."""
        await asyncio.sleep(0)
        return f"<{url}>"

    tool = FunctionTool(fetch)
    assert tool.is_async
    assert asyncio.run(tool.run({"url": "x"})) == "<x>"


class Clock:
    """A tool object without description or parameters."""

    name = "clock"

    def run(self, args: Mapping[str, Any], /) -> str:
        """Tell the time."""
        return "noon"

    def tick(self, times: int) -> int:
        """Tick ``times`` times."""
        return times


def test_as_tool_accepts_functions_methods_and_tool_objects() -> None:
    """Functions and methods become ``FunctionTool``; tool objects and FunctionTools pass as-is."""
    clock = Clock()
    made = as_tool(add)
    assert isinstance(made, FunctionTool)
    assert made.name == "add"
    method = as_tool(clock.tick)
    assert isinstance(method, FunctionTool)
    assert method.name == "tick"
    assert method.run({"times": 3}) == 3
    assert as_tool(clock) is clock
    ready = FunctionTool(add)
    assert as_tool(ready) is ready


@pytest.mark.parametrize(
    "thing",
    [42, "add", object(), type("Named", (), {"name": 3, "run": lambda self, args: None})()],
    ids=["int", "str", "object", "non-str-name"],
)
def test_as_tool_refuses_what_is_no_tool(thing: object) -> None:
    """Anything but a function or an object with a str ``name`` and ``run`` is a ``TypeError``."""
    with pytest.raises(TypeError, match="a tool is a function or an object"):
        as_tool(thing)


def test_tool_objects_without_a_spec_get_an_empty_one() -> None:
    """A tool object's missing description and parameters are empty in its spec."""
    agent = Agent("assistant", ScriptedModel(), tools=[Clock()])
    assert agent.specs == (ToolSpec("clock", "", {}),)


# -- RetryPolicy --------------------------------------------------------------------


def test_retry_policy_defaults() -> None:
    """The defaults are the contract's: 3 attempts, 0.5 s base, 30 s cap, 10 % jitter."""
    policy = RetryPolicy()
    assert (policy.max_attempts, policy.base_delay, policy.max_delay, policy.jitter) == (
        3,
        0.5,
        30.0,
        0.1,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_attempts = 5  # type: ignore[misc]


def test_retry_delay_doubles_up_to_the_cap() -> None:
    """Without jitter, wait ``n`` is ``base_delay * 2 ** (n - 1)``, capped at ``max_delay``."""
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0, jitter=0)
    assert [policy.delay(n) for n in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_retry_delay_jitter_uses_the_given_rng() -> None:
    """With jitter the wait is scaled by a factor drawn from ``rng`` in ``[1 - j, 1 + j]``."""
    policy = RetryPolicy(base_delay=1.0, jitter=0.2)
    draws = random.Random(3)
    expected = [base * (1 + draws.uniform(-0.2, 0.2)) for base in (1.0, 2.0, 4.0)]
    rng = random.Random(3)
    assert [policy.delay(n, rng) for n in (1, 2, 3)] == expected
    waits = [policy.delay(2, random.Random(seed)) for seed in range(200)]
    assert all(1.6 <= wait <= 2.4 for wait in waits)
    assert len(set(waits)) > 100


def test_retry_delay_without_rng_stays_in_bounds() -> None:
    """Without an ``rng`` the module's random source is used, within the jitter bounds."""
    policy = RetryPolicy(base_delay=1.0, jitter=0.5)
    assert all(0.5 <= policy.delay(1) <= 1.5 for _ in range(50))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_attempts": 0},
        {"base_delay": -1},
        {"max_delay": -0.1},
        {"jitter": -0.1},
        {"jitter": 1.5},
    ],
)
def test_retry_policy_validates(kwargs: dict[str, Any]) -> None:
    """Nonsense budgets, delays and jitter are a ``ValueError`` naming the field."""
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        RetryPolicy(**kwargs)


# -- Agent --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "two words", "1st", "a-b", "a/b"])
def test_agent_names_must_be_identifiers(name: str) -> None:
    """An agent's name names a tool and a branch, so it must be an identifier."""
    with pytest.raises(ValueError, match="identifier"):
        Agent(name, ScriptedModel())


def test_agent_refuses_duplicate_tool_names() -> None:
    """Two tools, or a tool and a sub-agent, with the same name are a ``ValueError``."""
    with pytest.raises(ValueError, match="'add'"):
        Agent("assistant", ScriptedModel(), tools=[add, FunctionTool(add)])
    researcher = Agent("researcher", ScriptedModel())
    with pytest.raises(ValueError, match="'researcher'"):
        Agent(
            "assistant",
            ScriptedModel(),
            tools=[FunctionTool(add, name="researcher")],
            sub_agents=[researcher],
        )


def test_agent_refuses_what_is_no_model_or_sub_agent() -> None:
    """A model needs ``generate``; sub-agents must be ``Agent`` instances."""
    with pytest.raises(TypeError, match="generate"):
        Agent("assistant", object())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sub_agents"):
        Agent("assistant", ScriptedModel(), sub_agents=["researcher"])  # type: ignore[list-item]


def test_agent_knows_what_is_async() -> None:
    """Whether the model and each tool are async is decided when the agent is made."""

    async def fetch(url: str) -> str:
        """Fetch."""
        return url

    agent = Agent("assistant", AsyncScripted(ScriptedModel()), tools=[add, fetch])
    assert agent.model_is_async
    assert agent.tool_is_async == {"add": False, "fetch": True}
    assert not Agent("plain", ScriptedModel()).model_is_async


def test_agent_description_walk_and_specs() -> None:
    """Descriptions default sensibly; ``walk`` is depth first; specs list tools then sub-agents."""
    leaf = Agent("leaf", ScriptedModel())
    middle = Agent("middle", ScriptedModel(), sub_agents=[leaf], instruction="Do the middle.")
    other = Agent("other", ScriptedModel(), description="The other one.")
    root = Agent("root", ScriptedModel(), tools=[add], sub_agents=[middle, other])
    assert [agent.name for agent in root.walk()] == ["root", "middle", "leaf", "other"]
    assert leaf.description == "Ask the leaf agent."
    assert middle.description == "Do the middle."
    assert [(spec.name, spec.description) for spec in root.specs] == [
        ("add", "Add two integers."),
        ("middle", "Do the middle."),
        ("other", "The other one."),
    ]
    assert list(root.tools) == ["add", "middle", "other"]


# -- Runner lifecycle and misuse ----------------------------------------------------


class Seen(BeforeAgent):
    """Records that a run started."""

    def __init__(self) -> None:
        self.started = 0

    def before_agent(self, ctx: AgentContext, /) -> BeforeResult[AgentContext, ModelResponse]:
        """Count and go on."""
        self.started += 1
        return Cont(ctx)


def test_runner_is_a_context_manager_that_refuses_use_after_close(mode: Mode) -> None:
    """Leaving the ``with`` closes the runner; a closed runner refuses to run or re-enter."""
    with Runner(Agent("assistant", ScriptedModel(default="ok"))) as runner:
        assert repr(runner) == "<Runner 'assistant' open>"
        drive(runner, mode, "hi")
    assert runner.closed
    assert repr(runner) == "<Runner 'assistant' closed>"
    with pytest.raises(RuntimeError, match="closed"):
        drive(runner, mode, "again")
    with pytest.raises(RuntimeError, match="closed"), runner:
        pass
    runner.close()  # closing twice is fine
    assert runner.closed


def test_close_stops_the_tool_threads() -> None:
    """Closing the runner shuts the thread pool that ran sync tools in ``run_async``."""

    def tool_threads() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("hookline-tool")]

    model = ScriptedModel(
        [
            calling(ToolCall("a", "add", {"a": 1, "b": 1}), ToolCall("b", "add", {"a": 2, "b": 2})),
            "done",
        ]
    )
    with Runner(Agent("assistant", model, tools=[add])) as runner:
        result = asyncio.run(runner.run_async("go"))
        assert tool_threads()
    assert [e.result.content for e in events_of(result, ToolResultEvent)] == ["2", "4"]
    assert tool_threads() == []


def test_close_forgets_the_runners_own_sessions_only() -> None:
    """A runner clears the session store it made, never one it was given."""
    mine = Runner(Agent("assistant", ScriptedModel(default="ok")))
    mine.run("hi", session_id="s")
    given = InMemorySessions()
    theirs = Runner(Agent("assistant", ScriptedModel(default="ok")), sessions=given)
    theirs.run("hi", session_id="s")
    mine.close()
    theirs.close()
    assert isinstance(mine.sessions, InMemorySessions)
    assert len(mine.sessions) == 0
    assert len(given) == 1


def test_runner_validates_its_arguments() -> None:
    """A runner needs an ``Agent``, ``max_steps >= 1`` and valid callbacks."""
    with pytest.raises(TypeError, match="Agent"):
        Runner(ScriptedModel())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_steps"):
        Runner(Agent("assistant", ScriptedModel()), max_steps=0)

    class Typo:
        def before_modle(self, ctx: object) -> object:
            return Cont(ctx)

    with pytest.raises(InvalidCallbacks, match="before_model"):
        Runner(Agent("assistant", ScriptedModel()), callbacks=[Typo()])
    with (
        Runner(Agent("assistant", ScriptedModel())) as runner,
        pytest.raises(InvalidCallbacks, match="before_model"),
    ):
        runner.run("hi", callbacks=[Typo()])


def test_runs_take_a_str_or_a_message(mode: Mode) -> None:
    """A str is a user message; a ``Message`` is used as it is; anything else is refused."""
    model = ScriptedModel(default="ok")
    with Runner(Agent("assistant", model)) as runner:
        drive(runner, mode, "text")
        drive(runner, mode, Message("user", "message"))
        with pytest.raises(TypeError, match="str or a Message"):
            drive(runner, mode, 42)  # type: ignore[arg-type]
    assert [r.messages[-1].content for r in model.requests] == ["text", "message"]


async def _async_tool(x: int) -> int:
    """An async tool."""
    return x


class AsyncHook:
    """A callback with an async before_model."""

    async def before_model(self, ctx: object) -> object:
        """Never awaited by a sync run."""
        return Cont(ctx)


def _with_async_model() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", AsyncScripted(ScriptedModel(["ok"]))), {}


def _with_async_tool() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", ScriptedModel(["ok"]), tools=[_async_tool]), {}


def _with_async_sub_agent_tool() -> tuple[Agent, dict[str, list[object]]]:
    sub = Agent("researcher", ScriptedModel(["ok"]), tools=[_async_tool])
    return Agent("assistant", ScriptedModel(["ok"]), sub_agents=[sub]), {}


def _with_async_agent_callback() -> tuple[Agent, dict[str, list[object]]]:
    sub = Agent("researcher", ScriptedModel(["ok"]), callbacks=[AsyncHook()])
    return Agent("assistant", ScriptedModel(["ok"]), sub_agents=[sub]), {}


def _with_async_runner_callback() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", ScriptedModel(["ok"])), {"runner": [AsyncHook()]}


def _with_async_run_callback() -> tuple[Agent, dict[str, list[object]]]:
    return Agent("assistant", ScriptedModel(["ok"])), {"run": [AsyncHook()]}


@pytest.mark.parametrize(
    ("make", "error", "match"),
    [
        (_with_async_model, TypeError, "async model"),
        (_with_async_tool, TypeError, "async tools"),
        (_with_async_sub_agent_tool, TypeError, "'researcher' has async tools"),
        (_with_async_agent_callback, InvalidCallbacks, "before_model is async"),
        (_with_async_runner_callback, InvalidCallbacks, "before_model is async"),
        (_with_async_run_callback, InvalidCallbacks, "before_model is async"),
    ],
    ids=["model", "tool", "sub-agent-tool", "agent-callback", "runner-callback", "run-callback"],
)
def test_sync_run_refuses_async_parts_before_anything_runs(
    make: Callable[[], tuple[Agent, dict[str, list[object]]]], error: type[Exception], match: str
) -> None:
    """``run`` with an async model, tool or callback anywhere raises before any hook runs."""
    agent, where = make()
    seen = Seen()
    runner_callbacks = [seen, *where.get("runner", [])]
    with Runner(agent, callbacks=runner_callbacks) as runner:
        with pytest.raises(error, match=match):
            runner.run("hi", callbacks=where.get("run", []))
        assert seen.started == 0
        # The same parts are fine in run_async.
        assert asyncio.run(runner.run_async("hi", callbacks=where.get("run", []))).output == "ok"


def test_run_inside_a_running_loop_is_refused() -> None:
    """``run`` called from async code raises ``RuntimeError`` pointing to ``run_async``."""
    model = ScriptedModel(["ok"])

    async def main(runner: Runner) -> None:
        with pytest.raises(RuntimeError, match="run_async"):
            runner.run("hi")

    with Runner(Agent("assistant", model)) as runner:
        asyncio.run(main(runner))
    assert model.requests == []


# -- InMemorySessions ---------------------------------------------------------------


def test_in_memory_sessions_store_copies_by_user_and_session() -> None:
    """Sessions are keyed by ``(user_id, session_id)`` and never share lists with callers."""
    store = InMemorySessions()
    assert store.load("u", "s") == []
    messages = [Message("user", "hi"), Message("assistant", "hello")]
    store.save("u", "s", messages)
    messages.append(Message("user", "later"))
    loaded = store.load("u", "s")
    assert loaded == [Message("user", "hi"), Message("assistant", "hello")]
    loaded.clear()
    assert len(store.load("u", "s")) == 2
    assert store.load("other", "s") == []
    store.save("other", "s", [])
    assert len(store) == 2
    store.clear()
    assert len(store) == 0
    assert store.load("u", "s") == []


def test_function_tool_refuses_required_positional_only_parameters() -> None:
    """A function whose required parameters are positional-only cannot take the model's kwargs."""

    def positional(a: int, /) -> int:
        return a

    with pytest.raises(TypeError, match="positional-only"):
        FunctionTool(positional)


def test_closing_drops_the_combined_callbacks() -> None:
    """A closed runner holds no compiled callbacks of past runs."""

    class Audit:
        def on_event(self, event: object, /) -> None:
            pass

    runner = Runner(Agent("assistant", ScriptedModel(["hi"])))
    runner.run("x", callbacks=[Audit()])
    assert runner._combined
    runner.close()
    assert not runner._combined
