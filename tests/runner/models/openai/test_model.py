"""``OpenAIChatModel`` over the real SDK and a mock transport: requests, answers, errors.

Each reply is a fixture in ``tests/runner/models/openai/fixtures``, written from the API reference:
``{"status", "headers", "body"}``. Nothing leaves the process.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from runner import (
    Message,
    ModelRequest,
    ModelResponse,
    OpenAIChatModel,
    ReasoningPart,
    ToolCall,
    ToolSpec,
    Usage,
)
from runner._tools.arguments import UnparsedArguments
from tests.helpers import openai_server
from tests.helpers.openai_server import OpenAIServer, completion
from tests.helpers.runs import Mode

FIXTURES = Path(__file__).parent / "fixtures"
WEATHER = ToolSpec(
    "get_current_weather",
    "The weather in a city.",
    {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]},
)


def fixture(name: str) -> httpx2.Response:
    """The fixture ``name`` as the response a server would send."""
    data = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return httpx2.Response(data["status"], headers=data["headers"], json=data["body"])


class Mock:
    """A model on clients whose transport answers from ``replies`` and keeps each request."""

    def __init__(self, *replies: httpx2.Response | Exception, **params: Any) -> None:
        self.replies = list(replies)
        self.requests: list[httpx2.Request] = []
        transport = httpx2.MockTransport(self.handle)
        options: dict[str, Any] = {"api_key": "sk-test", "base_url": "https://api.test/v1"}
        self.model = OpenAIChatModel(
            "gpt-4o-mini",
            client=openai.OpenAI(
                **options, max_retries=0, http_client=httpx2.Client(transport=transport)
            ),
            async_client=openai.AsyncOpenAI(
                **options, max_retries=0, http_client=httpx2.AsyncClient(transport=transport)
            ),
            **params,
        )

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        """Keep ``request``, then answer (or raise) the next reply."""
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    @property
    def bodies(self) -> list[Any]:
        """The JSON bodies the SDK sent, in order."""
        return [json.loads(request.content) for request in self.requests]


def answer(model: OpenAIChatModel, request: ModelRequest, mode: Mode) -> ModelResponse:
    """``generate`` in sync mode, ``agenerate`` on a fresh event loop otherwise."""
    if mode == "sync":
        return model.generate(request)
    return asyncio.run(model.agenerate(request))


HELLO = ModelRequest((Message("user", "Hello!"),))


def test_plain_answer_sends_messages_and_params(mode: Mode) -> None:
    """Every keyword given to the model goes into the request; the answer maps whole."""
    mock = Mock(fixture("plain_answer"), temperature=0.2, seed=7, max_completion_tokens=64)
    response = answer(mock.model, HELLO, mode)
    assert mock.bodies == [
        {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "Hello!"}],
            "temperature": 0.2,
            "seed": 7,
            "max_completion_tokens": 64,
        }
    ]
    assert mock.requests[0].url == "https://api.test/v1/chat/completions"
    assert response == ModelResponse(
        "Hello! How can I assist you today?",
        usage=Usage(19, 10),
        finish_reason="stop",
        model="gpt-4o-mini-2024-07-18",  # the model that answered, not the one asked for
    )


def test_tool_calls_come_back_with_ids_names_and_parsed_arguments(mode: Mode) -> None:
    """A conversation with tools goes out in the wire format; each call comes back parsed."""
    history = (
        Message("system", "Be brief."),
        Message("user", "Weather in Boston?"),
        Message("assistant", "", tool_calls=(ToolCall("call_1", "get_time", {}),)),
        Message("tool", "12:00", tool_call_id="call_1", name="get_time"),
    )
    mock = Mock(fixture("tool_calls"))
    response = answer(mock.model, ModelRequest(history, (WEATHER, ToolSpec("get_time"))), mode)
    assert mock.bodies == [
        {
            "model": "gpt-4o-mini",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Weather in Boston?"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "get_time", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "content": "12:00", "tool_call_id": "call_1"},
            ],
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": "get_current_weather",
                        "description": "The weather in a city.",
                        "parameters": dict(WEATHER.parameters),
                    },
                },
                {
                    "type": "function",
                    "function": {
                        "name": "get_time",
                        "description": "",
                        "parameters": {"type": "object", "properties": {}},
                    },
                },
            ],
        }
    ]
    assert response == ModelResponse(
        "",
        (
            ToolCall("call_abc123", "get_current_weather", {"location": "Boston, MA"}),
            ToolCall(
                "call_def456", "get_current_weather", {"location": "Tokyo", "unit": "celsius"}
            ),
            ToolCall("call_ghi789", "get_time", {}),
        ),
        Usage(82, 17),
        "tool_calls",
        "gpt-4o-mini-2024-07-18",
    )


def test_malformed_arguments_do_not_fail_the_answer(mode: Mode) -> None:
    """Arguments that are no JSON object become ``UnparsedArguments``; the rest parse."""
    mock = Mock(fixture("malformed_arguments"))
    truncated, array, fine = answer(mock.model, HELLO, mode).tool_calls
    assert isinstance(truncated.args, UnparsedArguments)
    assert truncated.args.raw == '{"location": "Bos'
    assert truncated.args.problem.startswith("arguments are not valid JSON: Unterminated string")
    assert array.args == UnparsedArguments(
        '["Boston"]', "arguments must be a JSON object, got an array"
    )
    assert fine == ToolCall("call_fine", "get_time", {})


def test_usage_reports_cached_and_reasoning_tokens(mode: Mode) -> None:
    """Cached prompt tokens and reasoning tokens land in ``Usage``; the finish reason too."""
    response = answer(Mock(fixture("usage_details")).model, HELLO, mode)
    assert response.usage == Usage(2006, 300, cached_tokens=1920, reasoning_tokens=256)
    assert response.finish_reason == "length"


@pytest.mark.parametrize(
    ("reply", "error", "status"),
    [
        ("rate_limited", openai.RateLimitError, 429),
        ("server_error", openai.InternalServerError, 500),
    ],
)
def test_status_errors_keep_their_openai_types(
    mode: Mode, reply: str, error: type[openai.APIStatusError], status: int
) -> None:
    """A 429 or 500 is raised as the SDK's own error, with its response, after one request."""
    mock = Mock(fixture(reply))
    with pytest.raises(error) as raised:
        answer(mock.model, HELLO, mode)
    assert raised.value.status_code == status
    assert len(mock.requests) == 1
    if status == 429:
        assert raised.value.response.headers["retry-after"] == "2"
        assert raised.value.code == "rate_limit_exceeded"


def test_a_timeout_is_the_sdks_timeout_error(mode: Mode) -> None:
    """A transport timeout reaches the caller as ``openai.APITimeoutError``."""
    mock = Mock(httpx2.ReadTimeout("timed out"))
    with pytest.raises(openai.APITimeoutError):
        answer(mock.model, HELLO, mode)


def test_a_given_client_keeps_its_own_retries() -> None:
    """A client the caller made is used as it is: its own retries included."""
    retry_now = {"retry-after-ms": "1"}
    transport = httpx2.MockTransport(
        Replies(httpx2.Response(500, headers=retry_now, json={}), fixture("plain_answer"))
    )
    client = openai.OpenAI(
        api_key="k", base_url="https://api.test/v1", http_client=httpx2.Client(transport=transport)
    )
    assert OpenAIChatModel("m", client=client).generate(HELLO).text.startswith("Hello!")


class Replies:
    """A mock transport handler answering from a list."""

    def __init__(self, *replies: httpx2.Response) -> None:
        self.replies = list(replies)

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        """The next reply."""
        return self.replies.pop(0)


@pytest.mark.parametrize("name", ["messages", "tools", "stream"])
def test_parameters_the_model_sets_itself_are_refused(name: str) -> None:
    """``messages``, ``tools`` and ``stream`` are not request parameters here."""
    with pytest.raises(TypeError, match=f"OpenAIChatModel sets {name} itself"):
        OpenAIChatModel("m", **{name: 1})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


@pytest.mark.parametrize("bad", [None, 4, b"gpt"])
def test_the_model_name_must_be_a_str(bad: object) -> None:
    """A model name of the wrong type fails when the model is made."""
    with pytest.raises(TypeError, match=r"model must be a str \(the model's name\), got"):
        OpenAIChatModel(bad)  # type: ignore[arg-type]


def test_the_model_name_must_not_be_empty() -> None:
    """An empty name names no model."""
    with pytest.raises(ValueError, match="model must name a model, got ''"):
        OpenAIChatModel("")


def test_model_and_provider_are_exposed() -> None:
    """``model`` names the model, ``provider`` the API family; the repr shows both settings."""
    model = OpenAIChatModel("llama3.1", base_url="http://localhost:11434/v1")
    assert (model.model, model.provider) == ("llama3.1", "openai")
    assert repr(model) == "OpenAIChatModel('llama3.1', base_url='http://localhost:11434/v1')"


def test_without_the_extra_making_a_model_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no ``openai`` importable, the ImportError gives the exact install command."""
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[openai\]'") as raised:
        OpenAIChatModel("gpt-4o-mini")
    assert raised.value.name == "openai"


@pytest.mark.subprocess
def test_importing_hookline_imports_no_sdk() -> None:
    """``import runner, hooks`` loads neither the SDK, pydantic nor httpx2."""
    code = (
        "import sys, runner, hooks; runner.OpenAIChatModel; "
        "print(sorted({'openai', 'pydantic', 'httpx2'} & set(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def run_twice(model: OpenAIChatModel, mode: Mode) -> list[ModelResponse]:
    """Two answers: two ``generate`` calls, or two ``agenerate`` on two event loops."""
    return [answer(model, HELLO, mode), answer(model, HELLO, mode)]


def test_env_settings_are_honoured_and_clients_made_once(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    """``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` apply, as the SDK reads them."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    server.script(completion("one"), completion("two"))
    model = OpenAIChatModel("gpt-4o-mini")
    assert [response.text for response in run_twice(model, mode)] == ["one", "two"]
    model.close()
    assert [headers["authorization"] for headers in server.headers] == ["Bearer sk-from-env"] * 2


@pytest.mark.parametrize(
    ("api_key", "sent"), [(None, "Bearer hookline-no-key"), ("sk-given", "Bearer sk-given")]
)
def test_a_base_url_without_a_key_sends_a_placeholder(
    server: OpenAIServer, api_key: str | None, sent: str
) -> None:
    """Local servers need no key: with a base_url and none set, a placeholder is sent."""
    server.script(completion("hi"))
    model = OpenAIChatModel("local", base_url=server.url, api_key=api_key)
    model.generate(HELLO)
    model.close()
    assert server.headers[0]["authorization"] == sent


def test_no_key_for_openai_itself_is_the_sdks_error(clean_env: None) -> None:
    """Without a key or a base_url the SDK's own credentials error comes from ``generate``."""
    model = OpenAIChatModel("gpt-4o-mini")
    with pytest.raises(openai.OpenAIError, match="Missing credentials"):
        model.generate(HELLO)


def test_clients_the_model_makes_do_not_retry(server: OpenAIServer, mode: Mode) -> None:
    """A 500 is raised after exactly one request: hookline's hooks own every retry."""
    server.script(openai_server.error(500, "boom", kind="server_error", code=None))
    model = OpenAIChatModel("m", base_url=server.url)
    with pytest.raises(openai.InternalServerError):
        answer(model, HELLO, mode)
    model.close()
    assert len(server.bodies) == 1


def test_close_and_aclose_close_what_the_model_made(server: OpenAIServer) -> None:
    """After ``close`` / ``aclose`` the next call makes a fresh client."""
    server.script(*[completion(str(n)) for n in range(4)])
    model = OpenAIChatModel("m", base_url=server.url)

    async def twice() -> list[str]:
        first = (await model.agenerate(HELLO)).text
        await model.aclose()
        await model.aclose()  # a second close finds nothing to close
        second = (await model.agenerate(HELLO)).text
        await model.aclose()
        return [first, second]

    assert asyncio.run(twice()) == ["0", "1"]
    assert [model.generate(HELLO).text for _ in "ab"] == ["2", "3"]
    model.close()
    model.close()


def test_sdk_errors_are_not_wrapped(clean_env: None) -> None:
    """A connection refused is ``openai.APIConnectionError`` itself, not a hookline error."""
    model = OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1")  # discard port: refused
    with pytest.raises(openai.APIConnectionError) as raised:
        model.generate(HELLO)
    model.close()
    assert type(raised.value) is openai.APIConnectionError


@pytest.mark.parametrize("given", ["sync", "async"])
def test_one_given_client_lends_its_url_and_key_to_the_other(
    server: OpenAIServer, given: Mode
) -> None:
    """Given only one client, the model makes the other with its base URL and key."""
    server.script(completion("from the given"), completion("from the made"))
    options: dict[str, Any] = {"base_url": server.url, "api_key": "sk-lent", "max_retries": 0}
    if given == "sync":
        with openai.OpenAI(**options) as client:
            model = OpenAIChatModel("m", client=client)
            texts = [model.generate(HELLO).text, asyncio.run(model.agenerate(HELLO)).text]
    else:

        async def given_first() -> str:
            async with openai.AsyncOpenAI(**options) as client:
                return (await OpenAIChatModel("m", async_client=client).agenerate(HELLO)).text

        made = OpenAIChatModel("m", async_client=openai.AsyncOpenAI(**options))
        texts = [asyncio.run(given_first()), made.generate(HELLO).text]
        made.close()
    assert texts == ["from the given", "from the made"]
    assert [headers["authorization"] for headers in server.headers] == ["Bearer sk-lent"] * 2


def test_another_providers_reasoning_is_left_out_and_said(
    mode: Mode, caplog: pytest.LogCaptureFixture
) -> None:
    """Chat Completions takes no reasoning back: the parts are not sent, and one INFO
    record per call says how many of whose were left out."""
    thought = ReasoningPart("anthropic", '{"type": "thinking", "signature": "s"}', "hmm")
    history = ModelRequest(
        (
            Message("user", "Hi"),
            Message("assistant", "Hello", parts=(thought, thought)),
            Message("user", "Again"),
        )
    )
    mock = Mock(fixture("plain_answer"))
    with caplog.at_level("INFO", logger="runner"):
        answer(mock.model, history, mode)
    assert mock.bodies[0]["messages"][1] == {"role": "assistant", "content": "Hello"}
    [record] = [r for r in caplog.records if "left out" in r.getMessage()]
    assert record.getMessage() == (
        "OpenAIChatModel 'gpt-4o-mini' left out reasoning parts (2 of 'anthropic'): "
        "Chat Completions takes no reasoning back"
    )
