"""The ready-made error handlers: ``RetryTransient``, ``FallbackModel``, ``AsyncFallbackModel``."""

from __future__ import annotations

import asyncio
import email.utils
import math
import re
import threading
import time
from collections.abc import Mapping

import httpx2
import openai
import pytest

from hooks import Failure, Fallback, InvalidCallbacks, Retry, StopRun
from runner import (
    Agent,
    AsyncFallbackModel,
    ErrorEvent,
    FallbackEvent,
    FallbackModel,
    Invocation,
    Message,
    ModelAttemptEvent,
    ModelContext,
    ModelRequest,
    ModelResponse,
    RetryEvent,
    RetryPolicy,
    RetryTransient,
    Runner,
    ScriptedModel,
    ToolCall,
    ToolContext,
    ToolResultEvent,
)
from tests.helpers.runs import AsyncScripted, Mode, calling, drive, events_of, sleeper

INVOCATION = Invocation("inv", "assistant", "assistant")
REQUEST = ModelRequest((Message("user", "hi"),))
HTTP_REQUEST = httpx2.Request("POST", "https://api.openai.com/v1/chat/completions")
NO_WAIT = RetryPolicy(base_delay=0)


class FakeResponse:
    """A provider's HTTP response as an SDK keeps it: a status and headers."""

    def __init__(self, status_code: int, headers: Mapping[str, str]) -> None:
        self.status_code = status_code
        self.headers = dict(headers)


class ProviderError(Exception):
    """A provider SDK's status error: ``status_code`` and ``response.headers``."""

    def __init__(self, status_code: int, headers: Mapping[str, str] | None = None) -> None:
        super().__init__(f"HTTP {status_code}")
        self.status_code = status_code
        self.response = FakeResponse(status_code, headers or {})


def rate_limited(headers: Mapping[str, str] | None = None) -> openai.RateLimitError:
    """The openai SDK's own 429, over a real ``httpx2.Response``."""
    response = httpx2.Response(429, headers=headers or {}, request=HTTP_REQUEST)
    return openai.RateLimitError("Rate limit reached", response=response, body=None)


def bad_request() -> openai.BadRequestError:
    """The openai SDK's own 400: not transient."""
    response = httpx2.Response(400, request=HTTP_REQUEST)
    return openai.BadRequestError("Invalid request", response=response, body=None)


def model_ctx(attempt: int = 1, max_attempts: int = 3) -> ModelContext:
    """A model call's context at ``attempt`` of ``max_attempts``."""
    return ModelContext(INVOCATION, REQUEST, attempt=attempt, max_attempts=max_attempts)


def tool_ctx(attempt: int = 1, max_attempts: int = 3) -> ToolContext:
    """A tool call's context at ``attempt`` of ``max_attempts``."""
    call = ToolCall("c1", "search", {"query": "hookline"})
    return ToolContext(INVOCATION, call, attempt=attempt, max_attempts=max_attempts)


def notes(error: BaseException) -> list[str]:
    """The notes added to ``error`` (PEP 678), none if there are none."""
    return list(getattr(error, "__notes__", []))


# -- RetryTransient, called by hand ---------------------------------------------------


def test_transient_model_error_is_retried_with_the_policys_backoff() -> None:
    """Without ``Retry-After`` the retry leaves the wait to the runner's ``RetryPolicy``."""
    ctx = model_ctx()
    assert RetryTransient().on_model_error(Failure(ProviderError(503)), ctx) == Retry(ctx)


def test_transient_tool_error_is_retried() -> None:
    """Tools get the same treatment: a lost connection is retried."""
    ctx = tool_ctx()
    assert RetryTransient().on_tool_error(Failure(ConnectionError("down")), ctx) == Retry(ctx)


@pytest.mark.parametrize(
    ("headers", "delay"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "30"}, 30.0),
        ({"retry-after": "0"}, 0.0),
    ],
)
def test_retry_after_sets_the_wait(headers: dict[str, str], delay: float) -> None:
    """The server's ``Retry-After`` (up to ``max_delay``) becomes ``Retry(delay=...)``."""
    ctx = model_ctx()
    decided = RetryTransient().on_model_error(Failure(ProviderError(429, headers)), ctx)
    assert decided == Retry(ctx, delay=delay)


def test_retry_after_as_a_date_sets_the_wait() -> None:
    """An HTTP-date ``Retry-After`` waits until then."""
    soon = email.utils.formatdate(time.time() + 10, usegmt=True)
    decided = RetryTransient().on_model_error(
        Failure(ProviderError(503, {"retry-after": soon})), model_ctx()
    )
    assert isinstance(decided, Retry)
    assert decided.delay is not None
    assert 8 <= decided.delay <= 10


@pytest.mark.parametrize("value", ["31", "1e400", "inf"])
def test_a_longer_retry_after_than_max_delay_gives_up_at_once(value: str) -> None:
    """Retrying sooner than the server asked would be refused again: passed on, noted."""
    error = ProviderError(429, {"retry-after": value})
    failure: Failure[Exception] = Failure(error)
    assert RetryTransient(max_delay=30).on_model_error(failure, model_ctx()) is failure
    (note,) = notes(error)
    assert note.startswith("RetryTransient did not retry: the server asked to wait")
    assert note.endswith("more than max_delay=30s")


def test_max_delay_bounds_what_is_honoured() -> None:
    """A smaller ``max_delay`` gives up on waits the default would honour."""
    error = ProviderError(429, {"retry-after": "5"})
    ctx = model_ctx()
    assert RetryTransient(max_delay=5).on_model_error(Failure(error), ctx) == Retry(ctx, delay=5.0)
    failure: Failure[Exception] = Failure(error)
    assert RetryTransient(max_delay=4.5).on_model_error(failure, ctx) is failure


@pytest.mark.parametrize(
    "error", [ValueError("bad"), PermissionError("revoked"), ProviderError(400)], ids=repr
)
def test_not_transient_passes_the_same_failure_on_untouched(error: Exception) -> None:
    """An error that is not transient goes on as the very same ``Failure``, with no note."""
    failure: Failure[Exception] = Failure(error)
    handler = RetryTransient()
    assert handler.on_model_error(failure, model_ctx()) is failure
    assert handler.on_tool_error(failure, tool_ctx()) is failure
    assert notes(error) == []


def test_the_budget_is_the_contexts() -> None:
    """It retries while ``ctx.attempt < ctx.max_attempts``, then passes on with a note."""
    handler = RetryTransient()
    ctx = model_ctx(attempt=2, max_attempts=3)
    assert handler.on_model_error(Failure(TimeoutError("slow")), ctx) == Retry(ctx)
    error = TimeoutError("slow")
    failure: Failure[Exception] = Failure(error)
    assert handler.on_model_error(failure, model_ctx(attempt=3, max_attempts=3)) is failure
    assert notes(error) == ["RetryTransient gave up after 3 attempt(s): its budget is 3"]


def test_attempts_narrows_the_budget_never_widens_it() -> None:
    """``attempts`` below ``max_attempts`` stops sooner; above it, the runner's budget rules."""
    narrow = RetryTransient(attempts=2)
    failure: Failure[Exception] = Failure(TimeoutError("slow"))
    assert narrow.on_model_error(failure, model_ctx(attempt=2, max_attempts=5)) is failure
    assert isinstance(narrow.on_model_error(failure, model_ctx(1, 5)), Retry)
    wide = RetryTransient(attempts=10)
    assert wide.on_tool_error(failure, tool_ctx(attempt=3, max_attempts=3)) is failure
    assert isinstance(wide.on_tool_error(failure, tool_ctx(2, 3)), Retry)


def test_a_note_is_added_once() -> None:
    """Deciding twice on the same error does not repeat its note."""
    error = TimeoutError("slow")
    handler = RetryTransient()
    for _ in range(2):
        handler.on_model_error(Failure(error), model_ctx(attempt=1, max_attempts=1))
    assert len(notes(error)) == 1


def test_is_transient_overrides_the_rule() -> None:
    """The predicate given decides instead of ``is_transient``, both ways."""
    everything = RetryTransient(is_transient=lambda error: True)
    ctx = model_ctx()
    assert everything.on_model_error(Failure(ValueError("bad")), ctx) == Retry(ctx)
    nothing = RetryTransient(is_transient=lambda error: False)
    failure: Failure[Exception] = Failure(ProviderError(429))
    assert nothing.on_model_error(failure, ctx) is failure


def test_base_delay_gives_the_handler_its_own_backoff() -> None:
    """With ``base_delay`` the waits double from it, +-10% jitter, capped at ``max_delay``."""
    handler = RetryTransient(base_delay=1.0, max_delay=3.0)
    error = TimeoutError("slow")
    delays: list[float] = []
    for attempt in (1, 2, 3, 4):
        decided = handler.on_model_error(Failure(error), model_ctx(attempt, max_attempts=9))
        assert isinstance(decided, Retry)
        assert decided.delay is not None
        delays.append(decided.delay)
    for delay, base in zip(delays, [1.0, 2.0, 3.0, 3.0], strict=True):
        assert base * 0.9 <= delay <= base * 1.1
    zero = RetryTransient(base_delay=0).on_model_error(Failure(error), model_ctx())
    assert isinstance(zero, Retry)
    assert zero.delay == 0.0


def test_retry_after_beats_base_delay() -> None:
    """The server's wait is taken over the handler's own backoff."""
    ctx = model_ctx()
    failure: Failure[Exception] = Failure(ProviderError(429, {"retry-after": "2"}))
    assert RetryTransient(base_delay=5).on_model_error(failure, ctx) == Retry(ctx, delay=2.0)


@pytest.mark.parametrize(
    ("kwargs", "kind", "message"),
    [
        ({"attempts": 0}, ValueError, "RetryTransient.attempts must be a positive int, got 0"),
        ({"attempts": True}, TypeError, "RetryTransient.attempts must be a positive int"),
        ({"max_delay": -1}, ValueError, "RetryTransient.max_delay must be a finite number"),
        ({"max_delay": math.inf}, ValueError, "RetryTransient.max_delay must be a finite"),
        ({"base_delay": "1"}, TypeError, "RetryTransient.base_delay must be a finite number"),
        ({"is_transient": 5}, TypeError, "RetryTransient.is_transient must be callable or None"),
    ],
)
def test_retry_transient_refuses_bad_settings(
    kwargs: dict[str, object], kind: type[Exception], message: str
) -> None:
    """Each setting is checked when the handler is made, and the message names it."""
    with pytest.raises(kind, match=re.escape(message)):
        RetryTransient(**kwargs)  # type: ignore[arg-type]


def test_retry_transient_repr() -> None:
    """The repr shows the settings."""
    assert repr(RetryTransient()) == "RetryTransient(attempts=None, max_delay=30.0)"
    assert (
        repr(RetryTransient(attempts=2, base_delay=0.5, max_delay=5))
        == "RetryTransient(attempts=2, base_delay=0.5, max_delay=5)"
    )


# -- FallbackModel and AsyncFallbackModel, called by hand -----------------------------


class Primary(Exception):
    """The primary model's error."""


class Agenerating:
    """A sync model that also offers ``async def agenerate``, as ``OpenAIChatModel`` does."""

    def __init__(self) -> None:
        self.used: list[str] = []

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """The sync path."""
        self.used.append("generate")
        return ModelResponse(text="sync")

    async def agenerate(self, request: ModelRequest, /) -> ModelResponse:
        """The async path."""
        self.used.append("agenerate")
        return ModelResponse(text="async")


class Threaded:
    """A plain sync model that records the thread it answered on."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def generate(self, request: ModelRequest, /) -> ModelResponse:
        """Answer and note the thread."""
        self.threads.append(threading.get_ident())
        return ModelResponse(text="threaded")


def test_fallback_answers_from_the_backup_with_the_failed_request() -> None:
    """At the first failure (``after=1``) the backup answers ``ctx.request``."""
    backup = ScriptedModel(["from the backup"])
    decided = FallbackModel(backup).on_model_error(Failure(Primary("down")), model_ctx())
    assert decided == Fallback(ModelResponse(text="from the backup"))
    assert backup.requests == [REQUEST]


def test_fallback_waits_for_after_failures() -> None:
    """Before ``after`` failures it passes the failure on without calling the backup."""
    backup = ScriptedModel(["from the backup"])
    handler = FallbackModel(backup, after=2)
    failure: Failure[Exception] = Failure(Primary("down"))
    assert handler.on_model_error(failure, model_ctx(attempt=1, max_attempts=5)) is failure
    assert backup.calls == 0
    assert isinstance(handler.on_model_error(failure, model_ctx(2, 5)), Fallback)


def test_fallback_when_the_budget_is_spent_before_after() -> None:
    """With no retry left, it falls back even before ``after`` failures."""
    handler = FallbackModel(ScriptedModel(["backup"]), after=5)
    decided = handler.on_model_error(Failure(Primary("down")), model_ctx(3, max_attempts=3))
    assert decided == Fallback(ModelResponse(text="backup"))


def test_a_failing_backup_passes_the_primarys_failure_on_with_a_note() -> None:
    """The primary's error keeps its type; a note names the backup's error."""
    error = Primary("down")
    failure: Failure[Exception] = Failure(error)
    handler = FallbackModel(ScriptedModel([TimeoutError("backup slow")]))
    assert handler.on_model_error(failure, model_ctx()) is failure
    assert notes(error) == [
        "the fallback model ScriptedModel failed too: TimeoutError: backup slow"
    ]


def test_stop_run_from_the_backup_ends_the_run() -> None:
    """``StopRun`` raised by the backup is not taken for a model error."""
    handler = FallbackModel(ScriptedModel([StopRun("enough")]))
    with pytest.raises(StopRun):
        handler.on_model_error(Failure(Primary("down")), model_ctx())


def test_async_fallback_awaits_an_async_backup() -> None:
    """An ``async def generate`` backup is awaited."""
    handler = AsyncFallbackModel(AsyncScripted(ScriptedModel(["async backup"])))
    decided = asyncio.run(handler.on_model_error(Failure(Primary("down")), model_ctx()))
    assert decided == Fallback(ModelResponse(text="async backup"))


def test_async_fallback_prefers_agenerate() -> None:
    """A sync model with ``async def agenerate`` is awaited there, as the runner does."""
    backup = Agenerating()
    decided = asyncio.run(
        AsyncFallbackModel(backup).on_model_error(Failure(Primary("down")), model_ctx())
    )
    assert decided == Fallback(ModelResponse(text="async"))
    assert backup.used == ["agenerate"]


def test_async_fallback_runs_a_sync_backup_on_a_thread() -> None:
    """A plain sync backup runs off the event loop's thread, so the loop never blocks."""
    backup = Threaded()
    decided = asyncio.run(
        AsyncFallbackModel(backup).on_model_error(Failure(Primary("down")), model_ctx())
    )
    assert decided == Fallback(ModelResponse(text="threaded"))
    assert backup.threads != [threading.get_ident()]


def test_async_fallback_after_budget_failure_and_stop() -> None:
    """``after``, the budget, a failing backup and ``StopRun`` work as in ``FallbackModel``."""
    error = Primary("down")
    failure: Failure[Exception] = Failure(error)
    waiting = AsyncFallbackModel(ScriptedModel(["b"]), after=3)
    assert asyncio.run(waiting.on_model_error(failure, model_ctx(2, 5))) is failure
    spent = asyncio.run(waiting.on_model_error(failure, model_ctx(2, 2)))
    assert spent == Fallback(ModelResponse(text="b"))
    failing = AsyncFallbackModel(AsyncScripted(ScriptedModel([ValueError("no")])))
    assert asyncio.run(failing.on_model_error(failure, model_ctx())) is failure
    assert notes(error) == ["the fallback model AsyncScripted failed too: ValueError: no"]
    stopping = AsyncFallbackModel(ScriptedModel([StopRun("enough")]))
    with pytest.raises(StopRun):
        asyncio.run(stopping.on_model_error(failure, model_ctx()))


def test_fallback_refuses_what_is_no_model() -> None:
    """A class, an object without ``generate``, a bad ``after`` are refused at once."""
    with pytest.raises(TypeError, match=r"pass an instance: ScriptedModel\(\)"):
        FallbackModel(ScriptedModel)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="AsyncFallbackModel: a model needs a generate"):
        AsyncFallbackModel(object())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"FallbackModel\.after must be a positive int, got 0"):
        FallbackModel(ScriptedModel(), after=0)
    with pytest.raises(TypeError, match=r"AsyncFallbackModel\.after must be a positive int"):
        AsyncFallbackModel(ScriptedModel(), after=1.5)  # type: ignore[arg-type]


def test_sync_fallback_refuses_an_async_model() -> None:
    """An ``async def generate`` backup cannot answer a sync hook: use the async twin."""
    with pytest.raises(TypeError, match=r"generate is async def; use AsyncFallbackModel"):
        FallbackModel(AsyncScripted(ScriptedModel()))  # type: ignore[arg-type]


def test_fallback_reprs() -> None:
    """The reprs name the backup and ``after``."""
    backup = ScriptedModel()
    assert repr(FallbackModel(backup)) == f"FallbackModel({backup!r}, after=1)"
    assert repr(AsyncFallbackModel(backup, after=2)) == f"AsyncFallbackModel({backup!r}, after=2)"


# -- in a run -------------------------------------------------------------------------


def fallback(mode: Mode, backup: ScriptedModel, *, after: int = 1) -> object:
    """The fallback handler for ``mode``: ``FallbackModel`` or ``AsyncFallbackModel``."""
    if mode == "sync":
        return FallbackModel(backup, after=after)
    return AsyncFallbackModel(backup, after=after)


def test_run_waits_what_each_server_asked(mode: Mode, waits: list[tuple[str, float]]) -> None:
    """A 429 with ``Retry-After`` waits that; a 503 without waits the policy's backoff."""
    policy = RetryPolicy(max_attempts=3, base_delay=0.5, jitter=0)
    model = ScriptedModel([ProviderError(429, {"Retry-After": "2"}), ProviderError(503), "ok"])
    with Runner(Agent("assistant", model), retry=policy) as runner:
        result = drive(runner, mode, "hi", callbacks=[RetryTransient()])
    assert result.output == "ok"
    kind = sleeper(mode)
    assert waits == [(kind, 2.0), (kind, 1.0)]
    assert [(e.attempt, e.delay) for e in events_of(result, RetryEvent)] == [(2, 2.0), (3, 1.0)]


def test_run_retries_the_openai_sdks_rate_limit_error(
    mode: Mode, waits: list[tuple[str, float]]
) -> None:
    """The real ``openai.RateLimitError`` is retried after its ``retry-after-ms``."""
    model = ScriptedModel([rate_limited({"retry-after-ms": "250"}), "ok"])
    with Runner(Agent("assistant", model), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=[RetryTransient()])
    assert result.output == "ok"
    assert waits == [(sleeper(mode), 0.25)]
    (error,) = [event.error for event in events_of(result, ErrorEvent)]
    assert isinstance(error, openai.RateLimitError)


def test_run_fails_at_once_on_an_error_that_is_not_transient(mode: Mode) -> None:
    """A 400 is not retried: the run raises it after one model call."""
    model = ScriptedModel([bad_request(), "never"])
    with (
        Runner(Agent("assistant", model), retry=NO_WAIT) as runner,
        pytest.raises(openai.BadRequestError),
    ):
        drive(runner, mode, "hi", callbacks=[RetryTransient()])
    assert model.calls == 1


def test_run_gives_up_when_the_budget_is_spent(mode: Mode) -> None:
    """Three 503s with a budget of three: the last one is raised, saying why."""
    model = ScriptedModel([ProviderError(503), ProviderError(503), ProviderError(503), "late"])
    with (
        Runner(Agent("assistant", model), retry=NO_WAIT) as runner,
        pytest.raises(ProviderError) as info,
    ):
        drive(runner, mode, "hi", callbacks=[RetryTransient()])
    assert model.calls == 3
    assert notes(info.value) == ["RetryTransient gave up after 3 attempt(s): its budget is 3"]


def test_run_retries_transient_tool_errors(mode: Mode) -> None:
    """A tool that loses its connection twice is retried until it answers."""
    failures = [ConnectionResetError("reset"), TimeoutError("slow")]

    def search(query: str) -> str:
        """Search, failing at first."""
        if failures:
            raise failures.pop(0)
        return f"found {query}"

    model = ScriptedModel([calling(ToolCall("c1", "search", {"query": "x"})), "done"])
    with Runner(Agent("assistant", model, tools=[search]), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "go", callbacks=[RetryTransient()])
    (tool_result,) = events_of(result, ToolResultEvent)
    assert tool_result.result.content == "found x"
    assert [e.attempt for e in events_of(result, RetryEvent)] == [2, 3]


def test_run_retry_then_fallback(mode: Mode) -> None:
    """``[RetryTransient(), fallback]``: 429s until the budget is spent, then the backup."""
    primary = ScriptedModel([rate_limited(), rate_limited(), rate_limited()])
    backup = ScriptedModel(["from the backup"])
    callbacks = [RetryTransient(), fallback(mode, backup)]
    with Runner(Agent("assistant", primary), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=callbacks)
    assert result.output == "from the backup"
    assert primary.calls == 3
    assert [e.attempt for e in events_of(result, ModelAttemptEvent)] == [1, 2, 3]
    assert [e.attempt for e in events_of(result, RetryEvent)] == [2, 3]
    assert [e.attempt for e in events_of(result, FallbackEvent)] == [3]
    assert backup.requests == primary.requests[-1:]


def test_run_falls_back_at_once_on_an_error_that_is_not_transient(mode: Mode) -> None:
    """A 400 is not retried but falls back straight away."""
    primary = ScriptedModel([bad_request()])
    backup = ScriptedModel(["from the backup"])
    callbacks = [RetryTransient(), fallback(mode, backup)]
    with Runner(Agent("assistant", primary), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=callbacks)
    assert result.output == "from the backup"
    assert primary.calls == 1
    assert events_of(result, RetryEvent) == []


def test_run_falls_back_at_once_on_a_retry_after_too_long(mode: Mode) -> None:
    """A 429 asking for an hour is not waited for: the backup answers now."""
    primary = ScriptedModel([rate_limited({"retry-after": "3600"})])
    backup = ScriptedModel(["from the backup"])
    callbacks = [RetryTransient(), fallback(mode, backup)]
    with Runner(Agent("assistant", primary), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=callbacks)
    assert result.output == "from the backup"
    assert primary.calls == 1


def test_run_retry_attempts_narrow_the_budget_before_falling_back(mode: Mode) -> None:
    """``RetryTransient(attempts=2)`` under a budget of five falls back after two calls."""
    primary = ScriptedModel([ProviderError(503), ProviderError(503), "never"])
    backup = ScriptedModel(["from the backup"])
    callbacks = [RetryTransient(attempts=2), fallback(mode, backup)]
    policy = RetryPolicy(max_attempts=5, base_delay=0)
    with Runner(Agent("assistant", primary), retry=policy) as runner:
        result = drive(runner, mode, "hi", callbacks=callbacks)
    assert result.output == "from the backup"
    assert primary.calls == 2


def test_run_raises_the_primarys_error_when_the_backup_fails_too(mode: Mode) -> None:
    """Both fail: ``run()`` raises the primary's error, noted with the backup's."""
    primary = ScriptedModel([rate_limited(), rate_limited()])
    backup = ScriptedModel([ProviderError(500)])
    callbacks = [RetryTransient(), fallback(mode, backup)]
    policy = RetryPolicy(max_attempts=2, base_delay=0)
    with (
        Runner(Agent("assistant", primary), retry=policy) as runner,
        pytest.raises(openai.RateLimitError) as info,
    ):
        drive(runner, mode, "hi", callbacks=callbacks)
    assert notes(info.value) == [
        "RetryTransient gave up after 2 attempt(s): its budget is 2",
        "the fallback model ScriptedModel failed too: ProviderError: HTTP 500",
    ]


def test_fallback_alone_answers_the_first_failure(mode: Mode) -> None:
    """Without a retry handler the backup answers the first failure (``after=1``)."""
    primary = ScriptedModel([Primary("down")])
    backup = ScriptedModel(["from the backup"])
    with Runner(Agent("assistant", primary), retry=NO_WAIT) as runner:
        result = drive(runner, mode, "hi", callbacks=[fallback(mode, backup)])
    assert result.output == "from the backup"
    assert events_of(result, RetryEvent) == []


def test_async_backup_in_run_async() -> None:
    """``AsyncFallbackModel`` awaits an async backup inside ``arun``."""
    primary = ScriptedModel([bad_request()])
    backup = AsyncScripted(ScriptedModel(["async backup"]))
    with Runner(Agent("assistant", primary), retry=NO_WAIT) as runner:
        result = drive(runner, "async", "hi", callbacks=[AsyncFallbackModel(backup)])
    assert result.output == "async backup"


def test_sync_run_refuses_the_async_fallback_before_it_starts() -> None:
    """``Runner.run`` refuses ``AsyncFallbackModel`` before the model is called."""
    primary = ScriptedModel(["never"])
    handler = AsyncFallbackModel(ScriptedModel())
    with (
        Runner(Agent("assistant", primary), retry=NO_WAIT) as runner,
        pytest.raises(InvalidCallbacks),
    ):
        runner.run("hi", callbacks=[RetryTransient(), handler])
    assert primary.calls == 0
