"""The public names of ``runner``: pinned, sorted, documented."""

from __future__ import annotations

import ast
import importlib
import inspect
import itertools
import pkgutil

import pytest

import hooks
import runner

EXPORTED = [
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_OUTPUT",
    "AFTER_TOOL",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_TOOL",
    "ON_DELTA",
    "ON_MODEL_ERROR",
    "ON_OUTPUT_ERROR",
    "ON_TOOL_ERROR",
    "WRAP_MODEL",
    "WRAP_TOOL",
    "AfterAgent",
    "AfterModel",
    "AfterOutput",
    "AfterPoint",
    "AfterTool",
    "Agent",
    "AgentContext",
    "AnthropicModel",
    "Approve",
    "AsyncAfterAgent",
    "AsyncAfterModel",
    "AsyncAfterOutput",
    "AsyncAfterTool",
    "AsyncBeforeAgent",
    "AsyncBeforeModel",
    "AsyncBeforeTool",
    "AsyncFallbackModel",
    "AsyncModel",
    "AsyncObserver",
    "AsyncOnDelta",
    "AsyncOnEvent",
    "AsyncOnModelError",
    "AsyncOnOutputError",
    "AsyncOnToolError",
    "AsyncStreamingModel",
    "AsyncTool",
    "AsyncWrapModel",
    "AsyncWrapTool",
    "AttemptDiscardedEvent",
    "AuditBroken",
    "AuditHead",
    "BeforeAgent",
    "BeforeModel",
    "BeforePoint",
    "BeforeResult",
    "BeforeTool",
    "Budget",
    "CallState",
    "Callbacks",
    "ChainStep",
    "CompiledCallbacks",
    "Cont",
    "Decision",
    "DeltaContext",
    "DispatchPolicy",
    "DurableRunner",
    "Edit",
    "ErrorEvent",
    "ErrorPoint",
    "ErrorResult",
    "Event",
    "Explanation",
    "Failure",
    "Fallback",
    "FallbackEvent",
    "FallbackModel",
    "FilePart",
    "FunctionTool",
    "Halt",
    "HashChainAudit",
    "HookError",
    "HookEvent",
    "HookTimeout",
    "ImagePart",
    "InMemorySessions",
    "InboxStore",
    "InvalidCallbacks",
    "InvalidDecisions",
    "InvalidResult",
    "Invocation",
    "LoopGuard",
    "MCPError",
    "MCPTimeout",
    "MCPToolError",
    "MCPTools",
    "Match",
    "MaxStepsExceeded",
    "Message",
    "Model",
    "ModelAttemptEvent",
    "ModelChunk",
    "ModelContext",
    "ModelRequest",
    "ModelResponse",
    "ModelResponseEvent",
    "ModelTimeout",
    "Observer",
    "OnDelta",
    "OnEvent",
    "OnModelError",
    "OnOutputError",
    "OnToolError",
    "OpenAIChatModel",
    "OpenAIResponsesModel",
    "Operation",
    "Outcome",
    "OutcomeTag",
    "OutputContext",
    "OutputSpec",
    "OutputValidationError",
    "Part",
    "PausablePoint",
    "PausableResult",
    "Pause",
    "PauseEvent",
    "PausedRun",
    "PendingRequest",
    "Placed",
    "ProviderError",
    "ReasoningPart",
    "Redact",
    "Reject",
    "RequireApproval",
    "Respond",
    "Result",
    "ResumeRefused",
    "Retry",
    "RetryEvent",
    "RetryPolicy",
    "RetryTransient",
    "Role",
    "Rule",
    "RunContext",
    "RunFinishedEvent",
    "RunRecords",
    "RunResult",
    "RunStartedEvent",
    "RunState",
    "RunStatus",
    "Runner",
    "RunnerError",
    "SQLiteSessionStore",
    "ScriptExhausted",
    "ScriptItem",
    "ScriptedModel",
    "Session",
    "SessionBusy",
    "SessionConflict",
    "SessionStore",
    "ShadowEvent",
    "State",
    "StateKey",
    "StopEvent",
    "StopRun",
    "StreamEvent",
    "StreamingModel",
    "Success",
    "TextDelta",
    "Tier",
    "TimedCallback",
    "TimeoutRecord",
    "Tool",
    "ToolAnnotations",
    "ToolArgumentsError",
    "ToolAttemptEvent",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallEvent",
    "ToolContext",
    "ToolInfo",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Trace",
    "Transcript",
    "TruncateToolResult",
    "UnknownToolError",
    "Usage",
    "UserMessageEvent",
    "WrapModel",
    "WrapPoint",
    "WrapTool",
    "arun_after",
    "arun_before",
    "arun_on_error",
    "arun_wrap",
    "as_tool",
    "audit",
    "compile_callbacks",
    "dump_events",
    "explain",
    "guard",
    "idempotency_key",
    "inbox_store",
    "is_transient",
    "load_events",
    "matched",
    "observing",
    "retry_after",
    "run_after",
    "run_before",
    "run_on_error",
    "run_wrap",
    "shadow",
    "time_left",
    "with_timeout",
]

# Every public name of hooks is re-exported, so a program can import from runner alone.
FROM_HOOKS = [name for name in hooks.__all__ if name != "__version__"]


def _ruff_order(name: str) -> tuple[int, str]:
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_pinned_and_sorted() -> None:
    """``runner.__all__`` is exactly the documented names, sorted as ruff sorts them:
    constants, then classes, then functions, each alphabetically."""
    assert runner.__all__ == EXPORTED
    assert runner.__all__ == sorted(runner.__all__, key=_ruff_order)


def test_every_exported_name_exists() -> None:
    """Each name in ``__all__`` is an attribute of the package."""
    missing = [name for name in runner.__all__ if not hasattr(runner, name)]
    assert missing == []


@pytest.mark.parametrize("name", FROM_HOOKS)
def test_hooks_vocabulary_is_re_exported_as_is(name: str) -> None:
    """Every public name of ``hooks`` is in ``runner.__all__``, the very same object."""
    assert name in runner.__all__
    assert getattr(runner, name) is getattr(hooks, name)


def _alias_docstrings() -> dict[str, str]:
    """Module-level ``Name = ...`` assignments in runner's modules followed by a docstring."""
    found: dict[str, str] = {}
    for module in pkgutil.walk_packages(runner.__path__, "runner."):
        try:
            imported = importlib.import_module(module.name)
        except ImportError:  # an adapter whose framework this environment lacks
            continue
        source = inspect.getsource(imported)
        body = ast.parse(source).body
        for statement, following in itertools.pairwise(body):
            target = None
            if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                target = statement.target.id
            elif isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
                target = statement.targets[0].id
            if (
                target is not None
                and isinstance(following, ast.Expr)
                and isinstance(following.value, ast.Constant)
                and isinstance(following.value.value, str)
            ):
                found[target] = following.value.value
    return found


@pytest.mark.parametrize("name", [name for name in EXPORTED if name not in FROM_HOOKS])
def test_every_public_name_is_documented(name: str) -> None:
    """Classes and functions have their own docstring; type aliases have one after them
    (``hooks`` documents the names it defines: tests/hooks/test_exports.py)."""
    obj = getattr(runner, name)
    if inspect.isclass(obj) or inspect.isfunction(obj):
        doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else obj.__doc__
    else:
        doc = _alias_docstrings().get(name)
    assert isinstance(doc, str)
    assert doc.strip()


def test_public_methods_are_documented() -> None:
    """Every public method of an exported class defined in runner has a docstring."""
    undocumented = []
    for name in EXPORTED:
        obj = getattr(runner, name)
        if not inspect.isclass(obj) or not obj.__module__.startswith("runner."):
            continue
        for attribute, value in vars(obj).items():
            if attribute.startswith("_") or not callable(value):
                continue
            if not (getattr(value, "__doc__", None) or "").strip():
                undocumented.append(f"{name}.{attribute}")
    assert undocumented == []


@pytest.mark.parametrize(
    ("owner", "old", "new"),
    [
        (runner.Runner, "run_async", "arun"),
        (runner.Runner, "resume_async", "aresume"),
        (runner.DurableRunner, "run_async", "arun"),
        (runner.DurableRunner, "result_async", "aresult"),
        (runner.DurableRunner, "resume_async", "aresume"),
    ],
)
def test_the_0_2_names_of_async_twins_are_the_same_methods(owner: type, old: str, new: str) -> None:
    """Async twins are spelled ``a`` + name, as ``arun_before`` and ``agenerate`` are; the
    0.2 ``*_async`` names stay, as the very same methods."""
    assert vars(owner)[old] is vars(owner)[new]
