"""Hook-shaped names that match no point: refused when a dispatch starts, with a hint.

A callback's public attribute is *hook-shaped* when its name starts with ``before_``,
``after_``, ``on_`` or ``wrap_``, or is a hook name of a peer library (``PEERS``:
LangChain callbacks and middleware, openai-agents ``RunHooks`` / ``AgentHooks``,
google-adk callbacks and plugins, Strands hook events, pydantic-ai hooks, CrewAI hooks,
the Claude Agent SDK's hook events). A hook-shaped name is *unmatched* when it is not
the name of a point declared by the time a dispatch (or a run) starts and it is not a
*helper*: a name that contains a declared point's name as whole underscore-separated
words (``log_before_model``, ``before_model_hook``, ``on_model_error_count``) and is
no peer's hook name. ``before_tool_call`` contains ``before_tool`` but is Strands' and
CrewAI's name for it, so it is unmatched, never a helper.

An unmatched name is a guard that would never be called: the list is refused with
``InvalidCallbacks`` and a did-you-mean naming the point it most likely meant (the
peer's equivalent, else one read from its words, else the closest declared name).
"""

from __future__ import annotations

from difflib import get_close_matches
from typing import Final

from hooks._errors import InvalidCallbacks, describe
from hooks._points import kind_of, known_points

__all__ = [
    "HOOK_PREFIXES",
    "PEERS",
    "hook_shaped",
    "refuse_unmatched",
    "suggestions",
    "unmatched",
]

HOOK_PREFIXES: Final = ("before_", "after_", "on_", "wrap_")

_AGENT_ERROR: Final = ("on_model_error", "on_tool_error")

PEERS: Final[dict[str, tuple[str, ...]]] = {
    # LangChain callback handlers (BaseCallbackHandler / AsyncCallbackHandler)
    "on_llm_start": ("before_model",),
    "on_chat_model_start": ("before_model",),
    "on_llm_new_token": ("on_delta",),
    "on_llm_end": ("after_model",),
    "on_llm_error": ("on_model_error",),
    "on_chain_start": ("before_agent",),
    "on_chain_end": ("after_agent",),
    "on_chain_error": _AGENT_ERROR,
    "on_tool_start": ("before_tool",),
    "on_tool_end": ("after_tool",),
    "on_agent_action": ("before_tool",),
    "on_agent_finish": ("after_agent",),
    "on_retriever_start": ("before_tool",),
    "on_retriever_end": ("after_tool",),
    "on_retriever_error": ("on_tool_error",),
    "on_retry": _AGENT_ERROR,
    "on_text": ("on_event",),
    "on_custom_event": ("on_event",),
    # LangChain v1 agent middleware (the async twins start with "a")
    "abefore_agent": ("before_agent",),
    "aafter_agent": ("after_agent",),
    "abefore_model": ("before_model",),
    "aafter_model": ("after_model",),
    "wrap_model_call": ("wrap_model",),
    "awrap_model_call": ("wrap_model",),
    "wrap_tool_call": ("wrap_tool",),
    "awrap_tool_call": ("wrap_tool",),
    # openai-agents RunHooks and AgentHooks
    "on_agent_start": ("before_agent",),
    "on_agent_end": ("after_agent",),
    "on_start": ("before_agent",),
    "on_end": ("after_agent",),
    "on_handoff": ("before_agent",),
    # google-adk agent callbacks and plugins
    "before_agent_callback": ("before_agent",),
    "after_agent_callback": ("after_agent",),
    "before_model_callback": ("before_model",),
    "after_model_callback": ("after_model",),
    "on_model_error_callback": ("on_model_error",),
    "before_tool_callback": ("before_tool",),
    "after_tool_callback": ("after_tool",),
    "on_tool_error_callback": ("on_tool_error",),
    "before_run_callback": ("before_agent",),
    "after_run_callback": ("after_agent",),
    "on_user_message_callback": ("before_agent",),
    "on_event_callback": ("on_event",),
    # Strands hook events (BeforeToolCallEvent ...), as method names; CrewAI's too
    "before_invocation": ("before_agent",),
    "after_invocation": ("after_agent",),
    "before_model_call": ("before_model",),
    "after_model_call": ("after_model",),
    "before_model_invocation": ("before_model",),
    "after_model_invocation": ("after_model",),
    "before_tool_call": ("before_tool",),
    "after_tool_call": ("after_tool",),
    "before_tool_invocation": ("before_tool",),
    "after_tool_invocation": ("after_tool",),
    "before_llm_call": ("before_model",),
    "after_llm_call": ("after_model",),
    "before_kickoff": ("before_agent",),
    "after_kickoff": ("after_agent",),
    # pydantic-ai hooks
    "before_run": ("before_agent",),
    "after_run": ("after_agent",),
    "on_run_error": _AGENT_ERROR,
    "before_model_request": ("before_model",),
    "after_model_request": ("after_model",),
    "wrap_model_request": ("wrap_model",),
    "on_model_request_error": ("on_model_error",),
    "before_tool_execute": ("before_tool",),
    "after_tool_execute": ("after_tool",),
    "wrap_tool_execute": ("wrap_tool",),
    "on_tool_execute_error": ("on_tool_error",),
    # Claude Agent SDK hook events, snake_cased
    "pre_tool_use": ("before_tool",),
    "post_tool_use": ("after_tool",),
    "post_tool_use_failure": ("on_tool_error",),
    "user_prompt_submit": ("before_agent",),
    # names any framework might use
    "on_error": _AGENT_ERROR,
    "on_exception": _AGENT_ERROR,
    "on_failure": _AGENT_ERROR,
}
"""A peer library's hook name -> the points of this library that do its job."""

# Words of a hook-shaped name that tell its phase and its subject (read in that order).
_PHASES: Final = {
    "before": "before",
    "pre": "before",
    "start": "before",
    "begin": "before",
    "after": "after",
    "post": "after",
    "end": "after",
    "finish": "after",
    "done": "after",
    "complete": "after",
    "error": "error",
    "errors": "error",
    "exception": "error",
    "failure": "error",
    "fail": "error",
    "wrap": "wrap",
    "around": "wrap",
}
_SUBJECTS: Final = {
    "tool": "tool",
    "tools": "tool",
    "function": "tool",
    "action": "tool",
    "model": "model",
    "llm": "model",
    "chat": "model",
    "completion": "model",
    "generation": "model",
    "request": "model",
    "prompt": "model",
    "agent": "agent",
    "run": "agent",
    "chain": "agent",
    "invocation": "agent",
    "turn": "agent",
}


def hook_shaped(name: str) -> bool:
    """Whether ``name`` looks like a hook: a hook prefix, or a peer library's hook name."""
    return name.startswith(HOOK_PREFIXES) or name in PEERS


def unmatched(name: str) -> bool:
    """Whether public ``name`` is hook-shaped, no declared point's name and no helper."""
    if kind_of(name) is not None or not hook_shaped(name):
        return False
    return name in PEERS or not _contains_point(name)


def _contains_point(name: str) -> bool:
    words = name.split("_")
    return any(
        kind_of("_".join(words[start:end])) is not None
        for start in range(len(words))
        for end in range(start + 1, len(words) + 1)
    )


def suggestions(name: str) -> tuple[str, ...]:
    """The declared points ``name`` most likely meant, best first (maybe none)."""
    declared = known_points()
    peers = tuple(point for point in PEERS.get(name, ()) if point in declared)
    if peers:
        return peers
    read = _read(name)
    if read and all(point in declared for point in read):
        return read
    return tuple(get_close_matches(name, list(declared), n=1, cutoff=0.6))


def _read(name: str) -> tuple[str, ...]:
    """The points a name's words point at: ``on_function_begin`` -> ``before_tool``."""
    phase = subject = None
    for word in name.lower().split("_"):
        phase = phase or _PHASES.get(word)
        subject = subject or _SUBJECTS.get(word)
    if phase is None:
        return ()
    if phase == "error":
        if subject == "agent" or subject is None:
            return _AGENT_ERROR
        return (f"on_{subject}_error",)
    if subject is None or (phase == "wrap" and subject == "agent"):
        return ()
    return (f"{phase}_{subject}",)


def refuse_unmatched(callback: object, names: list[str]) -> None:
    """Refuse ``callback`` for its unmatched hook-shaped ``names`` (sorted; the first named)."""
    if not names:
        return
    names.sort()
    name = names[0]
    hint = suggestions(name)
    also = f" (also unmatched: {', '.join(map(repr, names[1:4]))})" if len(names) > 1 else ""
    meant = f"did you mean {' or '.join(map(repr, hint))}?" if hint else f"{_listing()}."
    msg = (
        f"{describe(callback)} defines {name!r}{also}, which matches no declared hook point "
        f"and would never be called; {meant} A hook-shaped name (before_/after_/on_/wrap_, or "
        "another library's hook name) must name a declared point: name a helper with a "
        "leading underscore"
    )
    raise InvalidCallbacks(msg, callback=callback, attribute=name)


def _listing() -> str:
    points = [name for name, kind in known_points().items() if kind != "event"]
    more = f" and {len(points) - 12} more" if len(points) > 12 else ""
    return f"the declared points are {', '.join(points[:12])}{more}"
