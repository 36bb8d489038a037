"""Tests that pin ``hooks``' public names and check that each public object is documented."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
import returns.result

import hooks
from hooks._points import known_points

EXPORTED = [
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_OUTPUT",
    "AFTER_TOOL",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_TOOL",
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
    "AgentContext",
    "Approve",
    "AsyncAfterAgent",
    "AsyncAfterModel",
    "AsyncAfterOutput",
    "AsyncAfterTool",
    "AsyncBeforeAgent",
    "AsyncBeforeModel",
    "AsyncBeforeTool",
    "AsyncObserver",
    "AsyncOnEvent",
    "AsyncOnModelError",
    "AsyncOnOutputError",
    "AsyncOnToolError",
    "AsyncWrapModel",
    "AsyncWrapTool",
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
    "DispatchPolicy",
    "Edit",
    "ErrorPoint",
    "ErrorResult",
    "Explanation",
    "Failure",
    "Fallback",
    "FilePart",
    "Halt",
    "HashChainAudit",
    "HookError",
    "HookEvent",
    "HookTimeout",
    "ImagePart",
    "InvalidCallbacks",
    "InvalidResult",
    "Invocation",
    "LoopGuard",
    "Match",
    "Message",
    "ModelContext",
    "ModelRequest",
    "ModelResponse",
    "Observer",
    "OnEvent",
    "OnModelError",
    "OnOutputError",
    "OnToolError",
    "Outcome",
    "OutcomeTag",
    "OutputContext",
    "OutputSpec",
    "Part",
    "PausablePoint",
    "PausableResult",
    "Pause",
    "Placed",
    "ReasoningPart",
    "Redact",
    "Reject",
    "RequireApproval",
    "Respond",
    "Result",
    "Retry",
    "Role",
    "State",
    "StateKey",
    "StopRun",
    "Success",
    "Tier",
    "TimedCallback",
    "TimeoutRecord",
    "ToolAnnotations",
    "ToolCall",
    "ToolContext",
    "ToolInfo",
    "ToolResult",
    "ToolSpec",
    "Trace",
    "TruncateToolResult",
    "Usage",
    "WrapModel",
    "WrapPoint",
    "WrapTool",
    "__version__",
    "arun_after",
    "arun_before",
    "arun_on_error",
    "arun_wrap",
    "audit",
    "compile_callbacks",
    "explain",
    "guard",
    "matched",
    "observing",
    "run_after",
    "run_before",
    "run_on_error",
    "run_wrap",
    "shadow",
    "with_timeout",
]

PROTOCOLS = [
    "AfterAgent",
    "AfterModel",
    "AfterOutput",
    "AfterTool",
    "BeforeAgent",
    "BeforeModel",
    "BeforeTool",
    "OnEvent",
    "OnModelError",
    "OnOutputError",
    "OnToolError",
    "WrapModel",
    "WrapTool",
]

ASYNC_PROTOCOLS = [f"Async{name}" for name in PROTOCOLS]


def _isort_key(name: str) -> tuple[int, str]:
    """The order ruff's RUF022 keeps ``__all__`` in: CONSTANTS, then Classes, then the rest."""
    if name.isupper():
        return (0, name)
    if name[0].isupper():
        return (1, name)
    return (2, name)


def _public_objects() -> list[tuple[str, Any]]:
    """The exported classes and functions (aliases and constants cannot hold a docstring)."""
    objects = [(name, getattr(hooks, name)) for name in hooks.__all__]
    return [(n, o) for n, o in objects if inspect.isclass(o) or inspect.isfunction(o)]


def _own_docstring(obj: Any) -> str:
    """``obj``'s docstring, ignoring the one ``dataclass`` makes up from the signature."""
    doc = inspect.getdoc(obj) or ""
    if inspect.isclass(obj) and doc.startswith(f"{obj.__name__}("):
        return ""
    return doc.strip()


def test_all_is_pinned() -> None:
    """``hooks.__all__`` is exactly the public API this test knows."""
    assert hooks.__all__ == EXPORTED


def test_all_is_sorted_without_duplicates() -> None:
    """``__all__`` is sorted (constants, then classes, then functions) and names each once."""
    assert hooks.__all__ == sorted(hooks.__all__, key=_isort_key)
    assert len(set(hooks.__all__)) == len(hooks.__all__)


def test_every_exported_name_is_importable() -> None:
    """``from hooks import *`` binds exactly the names in ``__all__``, each to hooks' object."""
    namespace: dict[str, Any] = {}
    exec("from hooks import *", namespace)
    namespace.pop("__builtins__")
    assert sorted(namespace) == sorted(hooks.__all__)
    for name in hooks.__all__:
        assert namespace[name] is getattr(hooks, name)


def test_returns_types_are_re_exported_unchanged() -> None:
    """``Success``, ``Failure`` and ``Result`` are the ``returns`` classes themselves."""
    assert hooks.Success is returns.result.Success
    assert hooks.Failure is returns.result.Failure
    assert hooks.Result is returns.result.Result


def test_no_private_names_are_exported() -> None:
    """No exported name starts with an underscore, except the dunder ``__version__``."""
    assert [name for name in hooks.__all__ if name.startswith("_")] == ["__version__"]


def test_version_is_the_installed_distributions() -> None:
    """``hooks.__version__`` is hookline's version from the package metadata."""
    from importlib.metadata import version

    assert hooks.__version__ == version("hookline")


def test_version_without_metadata_is_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """Imported from a source tree that was never installed, ``__version__`` is ``0+unknown``."""
    import importlib
    import importlib.metadata

    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    try:
        reloaded = importlib.reload(hooks)
        assert reloaded.__version__ == "0+unknown"
    finally:
        monkeypatch.undo()
        importlib.reload(hooks)


@pytest.mark.parametrize(("name", "obj"), _public_objects(), ids=lambda value: str(value)[:30])
def test_public_classes_and_functions_have_docstrings(name: str, obj: Any) -> None:
    """Every exported class and function has a docstring of its own."""
    assert _own_docstring(obj), f"{name} has no docstring"


@pytest.mark.parametrize(
    ("name", "obj"),
    [
        (n, o)
        for n, o in _public_objects()
        if inspect.isclass(o) and o.__module__.startswith("hooks.")
    ],
    ids=lambda value: str(value)[:30],
)
def test_public_methods_of_hooks_classes_have_docstrings(name: str, obj: Any) -> None:
    """Every public method and property defined by a hooks class has a docstring."""
    undocumented = [
        attribute
        for attribute, member in vars(obj).items()
        if not attribute.startswith("_")
        and (inspect.isfunction(member) or isinstance(member, property))
        and not (member.__doc__ or "").strip()
    ]
    assert undocumented == [], f"{name} has undocumented members"


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@pytest.mark.parametrize("name", PROTOCOLS)
def test_protocols_have_one_documented_method_named_after_their_point(name: str) -> None:
    """Each protocol defines one documented method, named after its point (``BeforeModel`` has
    ``before_model``)."""
    protocol = getattr(hooks, name)
    methods = {
        attribute: member
        for attribute, member in vars(protocol).items()
        if not attribute.startswith("_") and inspect.isfunction(member)
    }
    assert list(methods) == [_snake(name)]
    assert _snake(name) in known_points()
    assert (methods[_snake(name)].__doc__ or "").strip()
    assert _own_docstring(protocol)


@pytest.mark.parametrize("name", PROTOCOLS)
def test_protocol_parameters_are_positional_only(name: str) -> None:
    """Protocol methods take arguments positionally only, so implementations name them freely."""
    method = getattr(getattr(hooks, name), _snake(name))
    _self, *params = inspect.signature(method).parameters.values()
    assert params
    assert all(param.kind is inspect.Parameter.POSITIONAL_ONLY for param in params)


def test_protocol_arities_match_their_points() -> None:
    """Before protocols take ``(ctx)``, after, error and wrap ones two arguments, ``OnEvent``
    one."""
    kinds = known_points()
    arity = {"before": 1, "after": 2, "error": 2, "wrap": 2, "event": 1}
    for name in PROTOCOLS:
        method_name = _snake(name)
        method = getattr(getattr(hooks, name), method_name)
        assert len(inspect.signature(method).parameters) - 1 == arity[kinds[method_name]], name


@pytest.mark.parametrize(
    "name",
    [n for n in EXPORTED if n.isupper()],
)
def test_constants_are_the_builtin_points(name: str) -> None:
    """Each exported constant is the built-in point named by its lowercased name."""
    point = getattr(hooks, name)
    assert point.name == name.lower()
    assert isinstance(
        point,
        hooks.BeforePoint
        | hooks.PausablePoint
        | hooks.AfterPoint
        | hooks.ErrorPoint
        | hooks.WrapPoint,
    )


@pytest.mark.parametrize("name", ASYNC_PROTOCOLS)
def test_async_protocols_are_twins_of_the_sync_ones(name: str) -> None:
    """Each ``Async*`` protocol has its twin's one method, as ``async def``, same parameters."""
    twin = getattr(hooks, name.removeprefix("Async"))
    method_name = _snake(twin.__name__)
    method = getattr(getattr(hooks, name), method_name)
    assert inspect.iscoroutinefunction(method)
    assert list(inspect.signature(method).parameters) == list(
        inspect.signature(getattr(twin, method_name)).parameters
    )
    assert all(
        param.kind is inspect.Parameter.POSITIONAL_ONLY
        for param in list(inspect.signature(method).parameters.values())[1:]
    )
