"""hookline callbacks guarding a LangChain 1.x agent: ``hookline_middleware(callbacks)``.

The middleware runs hookline's chains inside LangChain's ``wrap_model_call`` and
``wrap_tool_call``, in the order a ``Runner`` runs them: ``before_X`` (a ``Cont(ctx')``
rewrites the request or the call, a ``Halt`` answers without calling the handler), then
each attempt through the wraps (first outermost) to the handler, ``on_X_error`` on a
failed attempt (``Retry`` calls the handler again within ``max_attempts``, first through
``before_X`` when it changed the call; ``Fallback`` stands in), then ``after_X``. A
``Pause`` from ``before_tool`` is a LangGraph ``interrupt()`` (the agent needs a
checkpointer); resuming with ``Command(resume=Approve() | Edit(args) | Reject(msg))`` runs
``before_tool`` again with that decision in ``ctx.decision``. Tiers and matches apply as in
a run; observers (an ``audit`` tier too) are told every dispatch with the deciding
callback named. ``ainvoke`` runs the async twins (``awrap_model_call`` /
``awrap_tool_call``), awaiting ``async def`` hooks.

One invocation ``State`` per agent run (the thread and its latest user message), shared by
the sub-agents a tool of the run invokes: a ``Budget`` counts across them. Messages are
converted both ways: text, tool calls and tool results; content LangChain holds in other
blocks (images, files, reasoning) is refused with ``TypeError`` when it reaches a hook,
never dropped.

Install with ``pip install 'hookline[langchain]'``.
"""

from __future__ import annotations

try:
    from runner.adapters.langchain._convert import resume_value
    from runner.adapters.langchain._middleware import HooklineMiddleware, hookline_middleware
except ImportError as error:  # pragma: no cover - an environment without LangChain
    if error.name is None or error.name.split(".")[0] not in {
        "langchain",
        "langchain_core",
        "langgraph",
    }:
        raise
    msg = (
        "runner.adapters.langchain needs LangChain 1.x: pip install 'hookline[langchain]' "
        f"({error})"
    )
    raise ImportError(msg, name=error.name) from error

__all__ = ["HooklineMiddleware", "hookline_middleware", "resume_value"]
