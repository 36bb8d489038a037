"""examples/langchain_guard.py: the quickstart's callbacks guard a LangChain agent."""

from __future__ import annotations

from examples import langchain_guard
from examples.quickstart import MESSAGES


def test_the_quickstart_guards_answer_as_in_the_quickstart() -> None:
    """The four answers: the sum, the weather after a retry, the refusal, the redacted send."""
    demo = langchain_guard.run_demo()
    assert demo.answers == (
        "It is 5.0.",
        "It's 18°C, light rain in Paris.",
        "I can't help with that.",
        "Done: the notes went to <email>.",
    )
    assert len(demo.events) == len(MESSAGES)


def test_guard_halts_before_the_model_and_the_retry_is_told() -> None:
    """The password turn halts at before_agent; the weather call's failed attempt is retried."""
    demo = langchain_guard.run_demo()
    password = [(e.point, e.outcome, e.callback) for e in demo.events[2]]
    assert password[0] == ("before_agent", "halt", "Guard instance")
    assert all(point != "before_model" for point, _, _ in password)
    weather = [(e.point, e.attempt, e.outcome) for e in demo.events[1] if e.tool == "weather"]
    assert ("on_tool_error", 1, "retry") in weather
    assert ("wrap_tool", 2, "success") in weather


def test_the_model_never_received_the_address() -> None:
    """RedactEmails rewrote what the model got: no request holds jane.doe@example.com."""
    demo = langchain_guard.run_demo()
    texts = [str(m.content) for request in demo.model.received for m in request]
    assert any("<email>" in text for text in texts)
    assert not any("jane.doe@example.com" in text for text in texts)


def test_main_prints_each_turn(capsys) -> None:  # type: ignore[no-untyped-def]
    """main() prints each message and its answer."""
    langchain_guard.main()
    out = capsys.readouterr().out
    for message in MESSAGES:
        assert f"> {message}" in out
    assert "before_agent: halt (Guard instance)" in out
