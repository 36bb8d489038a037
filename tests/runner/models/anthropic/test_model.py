"""``AnthropicModel.generate`` / ``agenerate`` over the real SDK against the loopback server.

Each test says exactly what went over the wire (the recorded request bodies, field by
field) and what came back; the ``mode`` fixture runs it through the sync and the async
client.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import anthropic
import pytest

from runner import (
    AnthropicModel,
    ImagePart,
    Message,
    ModelRequest,
    ModelResponse,
    ModelTimeout,
    ProviderError,
    ToolCall,
    ToolSpec,
    Usage,
    is_transient,
    retry_after,
)
from tests.helpers.anthropic_server import (
    AnthropicServer,
    Reply,
    error,
    message,
    raw,
    redacted,
    silent,
    text,
    thinking,
    tool_use,
)
from tests.helpers.runs import Mode

ADD = ToolSpec(
    "add",
    "Add two integers.",
    {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
)
HELLO = ModelRequest((Message("system", "Be brief."), Message("user", "Hello!")))


def answer(model: AnthropicModel, request: ModelRequest, mode: Mode) -> ModelResponse:
    """``generate`` in sync mode, ``agenerate`` on a fresh event loop otherwise."""
    if mode == "sync":
        return model.generate(request)
    return asyncio.run(model.agenerate(request))


@pytest.fixture
def model(anthropic_server: AnthropicServer) -> Any:
    """A model on the loopback server, its sync client closed after the test."""
    made = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="sk-ant-test")
    yield made
    made.close()


def test_a_plain_answer_sends_system_messages_max_tokens_and_params(
    anthropic_server: AnthropicServer, mode: Mode
) -> None:
    """The instruction is ``system``; every keyword given goes into the request."""
    anthropic_server.script(message(text("Hi!"), usage={"input_tokens": 9, "output_tokens": 3}))
    model = AnthropicModel(
        "claude-test",
        base_url=anthropic_server.url,
        api_key="sk-ant-test",
        max_tokens=256,
        stop_sequences=["END"],
        extra_body={"temperature": 0.2},
    )
    response = answer(model, HELLO, mode)
    model.close()
    assert anthropic_server.bodies == [
        {
            "model": "claude-test",
            "max_tokens": 256,
            "system": "Be brief.",
            "messages": [{"role": "user", "content": "Hello!"}],
            "stop_sequences": ["END"],
            "temperature": 0.2,
        }
    ]
    assert anthropic_server.paths == ["/v1/messages"]
    assert anthropic_server.headers[0]["authorization"] == "Bearer sk-ant-test"
    assert response == ModelResponse("Hi!", (), Usage(9, 3), "stop", "claude-test-20260101")


def test_a_tool_round_trip_with_reasoning_sends_the_thinking_back_unchanged(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """Turn one answers thinking + tool_use; turn two sends those blocks back first, byte
    for byte in content, then the call, then the result as a tool_result block."""
    thought = thinking("The user wants 2 + 3. I'll call add.", "EqQBCkYIAxgCIkD+/sig==")
    hidden = redacted("EmwKAhgBEgy3va3pzix/LafPsn4a")
    anthropic_server.script(
        message(thought, hidden, text("Adding."), tool_use("toolu_01", "add", {"a": 2, "b": 3})),
        message(text("It is 5.")),
    )
    first = answer(model, ModelRequest((Message("user", "2 + 3?"),), (ADD,)), mode)
    assert first.tool_calls == (ToolCall("toolu_01", "add", {"a": 2, "b": 3}),)
    assert first.finish_reason == "tool_calls"
    assert [(p.provider, p.summary) for p in first.parts] == [
        ("anthropic", "The user wants 2 + 3. I'll call add."),
        ("anthropic", ""),
    ]
    history = (
        Message("user", "2 + 3?"),
        Message("assistant", first.text, tool_calls=first.tool_calls, parts=first.parts),
        Message("tool", "5", tool_call_id="toolu_01", name="add"),
    )
    second = answer(model, ModelRequest(history, (ADD,)), mode)
    assert second.text == "It is 5."
    sent = anthropic_server.bodies[1]
    assert sent["tools"] == [
        {"name": "add", "description": "Add two integers.", "input_schema": dict(ADD.parameters)}
    ]
    assert sent["messages"] == [
        {"role": "user", "content": "2 + 3?"},
        {
            "role": "assistant",
            "content": [
                thought,
                hidden,
                {"type": "text", "text": "Adding."},
                {"type": "tool_use", "id": "toolu_01", "name": "add", "input": {"a": 2, "b": 3}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_01", "content": "5"}],
        },
    ]
    # The payload is the block as it came: the signature and data are untouched.
    assert [json.loads(p.payload) for p in first.parts] == [thought, hidden]


def test_an_image_goes_out_as_an_image_block(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """A user's image is an image block after the text, its bytes in base64."""
    anthropic_server.script(message(text("A cat.")))
    image = ImagePart(data=b"\x89PNG", media_type="image/png")
    answer(model, ModelRequest((Message("user", "What is it?", parts=(image,)),)), mode)
    assert anthropic_server.bodies[0]["messages"][0]["content"] == [
        {"type": "text", "text": "What is it?"},
        {
            "type": "image",
            "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw=="},
        },
    ]


def test_an_answer_cut_at_max_tokens_is_length_with_what_came(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """An incomplete answer is an answer: its text, and finish_reason ``length``."""
    anthropic_server.script(message(text("It is a long"), stop_reason="max_tokens"))
    response = answer(model, HELLO, mode)
    assert (response.text, response.finish_reason) == ("It is a long", "length")


def test_cache_reads_are_cached_tokens_of_the_whole_input(
    anthropic_server: AnthropicServer, model: AnthropicModel, mode: Mode
) -> None:
    """Usage.input_tokens is the whole input; cached_tokens the part read from the cache."""
    usage = {
        "input_tokens": 5,
        "cache_creation_input_tokens": 10,
        "cache_read_input_tokens": 2000,
        "output_tokens": 7,
    }
    anthropic_server.script(message(text("ok"), usage=usage))
    assert answer(model, HELLO, mode).usage == Usage(2015, 7, 2000, 0)


@pytest.mark.parametrize(
    "case",
    [
        (429, "rate_limit_error", anthropic.RateLimitError, True),
        (529, "overloaded_error", anthropic.OverloadedError, True),
        (500, "api_error", anthropic.InternalServerError, True),
        (408, "timeout_error", anthropic.RequestTimeoutError, True),
        (409, "conflict_error", anthropic.ConflictError, True),
        (400, "invalid_request_error", anthropic.BadRequestError, False),
        (401, "authentication_error", anthropic.AuthenticationError, False),
    ],
)
def test_status_errors_are_the_sdks_and_classified(
    anthropic_server: AnthropicServer,
    model: AnthropicModel,
    mode: Mode,
    case: tuple[int, str, type[Exception], bool],
) -> None:
    """Each status error comes as the SDK's own type, after one request (no SDK retry),
    with the server's retry-after read."""
    status, kind, raised, transient = case
    anthropic_server.script(error(status, kind, "no", headers={"retry-after": "7"}))
    with pytest.raises(raised) as caught:
        answer(model, HELLO, mode)
    assert is_transient(caught.value) is transient
    assert retry_after(caught.value) == 7.0
    assert len(anthropic_server.bodies) == 1


@pytest.mark.parametrize(
    "case",
    [
        (raw(b"<html>502 Bad Gateway</html>", "text/html"), "the body is no JSON", False),
        (raw(b'{"type": "message", "content": [', "application/json"), "no JSON", True),
        (raw(b'{"type": "completion"}', "application/json"), "no message", False),
        (raw(b'{"type": "message", "content": 3}', "application/json"), "no message", False),
    ],
)
def test_a_body_that_is_no_message_is_a_provider_error(
    anthropic_server: AnthropicServer,
    model: AnthropicModel,
    mode: Mode,
    case: tuple[Reply, str, bool],
) -> None:
    """Named by URL, model, status, content type and first bytes; a cut body is transient."""
    reply, problem, transient = case
    anthropic_server.script(reply)
    with pytest.raises(ProviderError, match=problem) as caught:
        answer(model, HELLO, mode)
    error_ = caught.value
    assert error_.url == f"{anthropic_server.url}/v1/messages"
    assert (error_.model, error_.status) == ("claude-test", 200)
    assert error_.head == (reply.raw or b"")[:256]
    assert is_transient(error_) is transient


def test_a_silent_server_ends_at_the_deadline(
    anthropic_server: AnthropicServer, mode: Mode
) -> None:
    """No answer within ``deadline``: ``ModelTimeout``, a transient ``TimeoutError``."""
    anthropic_server.script(silent())
    model = AnthropicModel("claude-test", base_url=anthropic_server.url, api_key="k", deadline=0.3)
    with pytest.raises(ModelTimeout) as caught:
        answer(model, HELLO, mode)
    model.close()
    assert is_transient(caught.value)
    assert caught.value.url == f"{anthropic_server.url}/v1/messages"


def test_a_server_that_is_down_is_a_transient_connection_error(mode: Mode) -> None:
    """Nothing listening: the SDK's APIConnectionError, naming where and why."""
    with AnthropicServer() as gone:
        url = gone.url
    model = AnthropicModel("claude-test", base_url=url, api_key="k")
    with pytest.raises(anthropic.APIConnectionError, match=r"claude-test.*/v1/messages") as caught:
        answer(model, HELLO, mode)
    model.close()
    assert is_transient(caught.value)


def test_env_settings_are_the_sdks(
    anthropic_server: AnthropicServer, monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    """ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY apply, as the SDK reads them."""
    monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic_server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    anthropic_server.script(message(text("one")), message(text("two")))
    model = AnthropicModel("claude-test")
    assert [answer(model, HELLO, mode).text for _ in range(2)] == ["one", "two"]
    model.close()
    assert [h["authorization"] for h in anthropic_server.headers] == ["Bearer sk-ant-env"] * 2


def test_given_clients_are_used_as_they_are(anthropic_server: AnthropicServer, mode: Mode) -> None:
    """A client of the caller's is used, and left open by ``close()``: it is theirs."""
    anthropic_server.script(message(text("hi")))
    options: dict[str, Any] = {"base_url": anthropic_server.url, "api_key": "sk-given"}
    if mode == "sync":
        client = anthropic.Anthropic(**options)
        model = AnthropicModel("claude-test", client=client)
        assert model.generate(HELLO).text == "hi"
        model.close()
        assert not client.is_closed()
        client.close()
        return

    async def on_one_loop() -> None:
        aclient = anthropic.AsyncAnthropic(**options)
        model = AnthropicModel("claude-test", async_client=aclient)
        assert (await model.agenerate(HELLO)).text == "hi"
        await model.aclose()
        assert not aclient.is_closed()
        await aclient.close()

    asyncio.run(on_one_loop())
    assert anthropic_server.headers[0]["authorization"] == "Bearer sk-given"


def test_reserved_and_bad_arguments_are_refused() -> None:
    """The run gives the messages, system and tools: a keyword naming them is refused."""
    with pytest.raises(TypeError, match="AnthropicModel sets messages, system itself"):
        AnthropicModel("claude-test", system="x", messages=[])
    with pytest.raises(TypeError, match="model must be a str"):
        AnthropicModel(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="must name a model"):
        AnthropicModel("")
    with pytest.raises(ValueError, match="max_tokens must be an int >= 1"):
        AnthropicModel("claude-test", max_tokens=0)
    with pytest.raises(TypeError, match="max_tokens must be an int >= 1"):
        AnthropicModel("claude-test", max_tokens=True)
    with pytest.raises(TypeError, match=r"takes no temperature, top_k; .* extra_body"):
        AnthropicModel("claude-test", temperature=0.2, top_k=3)
    with pytest.raises(ValueError, match="deadline"):
        AnthropicModel("claude-test", deadline=-1)


def test_model_and_provider_are_exposed() -> None:
    """``model`` names the model, ``provider`` the API family (telemetry's provider name)."""
    model = AnthropicModel("claude-sonnet-5-5", base_url="http://localhost:4000")
    assert (model.model, model.provider, model.max_tokens) == (
        "claude-sonnet-5-5",
        "anthropic",
        4096,
    )
    assert repr(model) == "AnthropicModel('claude-sonnet-5-5', base_url='http://localhost:4000')"


def test_without_the_extra_making_a_model_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no ``anthropic`` importable, the ImportError gives the exact install command."""
    monkeypatch.setitem(sys.modules, "anthropic", None)
    with pytest.raises(ImportError, match=r"pip install 'hookline\[anthropic\]'") as raised:
        AnthropicModel("claude-test")
    assert raised.value.name == "anthropic"


@pytest.mark.subprocess
def test_importing_runner_imports_no_anthropic_sdk() -> None:
    """``import runner`` loads no ``anthropic``; with it blocked, making a model says what
    to install."""
    code = (
        "import sys; sys.modules['anthropic'] = None\n"
        "import runner, hooks\n"
        "assert 'anthropic' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "try:\n"
        "    runner.AnthropicModel('claude-test')\n"
        "except ImportError as error:\n"
        "    print(error)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == (
        "AnthropicModel needs the anthropic SDK, an optional extra: "
        "pip install 'hookline[anthropic]'"
    )
    loaded = "import sys, runner; runner.AnthropicModel; print('anthropic' in sys.modules)"
    assert (
        subprocess.run(
            [sys.executable, "-c", loaded], capture_output=True, text=True, check=True
        ).stdout.strip()
        == "False"
    )
