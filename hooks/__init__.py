"""hookline's hook system: tagged results, hook points, protocols and dispatch.

Callbacks are modules or objects whose methods satisfy the protocols below. Each
returns a tagged result that callers take apart with ``match``::

    result = run_before(callbacks, BEFORE_MODEL, ctx)
    match result:
        case Cont(ctx):
            response = model.generate(ctx.request)
        case Halt(response):
            pass
        case _:
            assert_never(result)

- results: ``Cont`` / ``Halt`` (before hooks), ``Pause`` (before hooks at a point
  that can pause: ``before_tool``), ``Retry`` / ``Fallback`` / ``Failure`` (error
  hooks), ``Success`` / ``Failure`` outcomes (after hooks and wraps); a human's
  ``Approve`` / ``Edit`` / ``Reject`` on a paused call arrives as ``ctx.decision``;
- points: ``BeforePoint``, ``PausablePoint``, ``AfterPoint``, ``ErrorPoint``,
  ``WrapPoint`` (each ``[C, T]``: context first) and the twelve built-ins -- ``BEFORE_AGENT`` /
  ``AFTER_AGENT``, ``BEFORE_MODEL`` / ``AFTER_MODEL`` / ``ON_MODEL_ERROR`` /
  ``WRAP_MODEL``, the same four for tools, ``ON_OUTPUT_ERROR`` / ``AFTER_OUTPUT`` for an
  agent's typed answer -- which check payload types at run time;
- protocols, one per built-in method (``BeforeModel``, ``WrapTool`` ...), and their
  async twins (``AsyncBeforeModel`` ...) for ``async def`` methods;
- dispatch: ``run_before``, ``run_after``, ``run_on_error``, ``run_wrap`` and the
  ``arun_*`` twins, over a list or its ``compile_callbacks`` form, under a
  ``DispatchPolicy``; a ``Trace`` tells which callback decided;
- deadlines: ``with_timeout(callback, seconds, fail="closed" | "open")`` bounds a
  callback's async hook methods; an overrun raises or carries ``HookTimeout`` (closed)
  or skips the hook (open), and is recorded in its ``timeouts``;
- vocabulary: the contexts, messages and the invocation ``State`` hooks receive;
- observers: ``on_event(HookEvent)``, or ``observing(fn)``.

Dispatch rules: callbacks run in list order, and one without the point's method is
skipped; an empty chain returns its input unchanged (the same object). Before: each
``Cont(ctx')`` hands ``ctx'`` on and the first ``Halt`` (or ``Pause``, where the point
can pause) ends the chain. After: every
callback runs on the previous one's outcome. Error: each gets the previous ``Failure``;
the first ``Retry`` or ``Fallback`` ends the chain, else the last ``Failure`` returns.
Wrap: the first callback is outermost; each gets ``call_next``, which runs the wraps
inside it and the operation and gives back their outcome (the operation's exception as
``Failure``), and returns an outcome; an empty chain runs the operation. Anything else,
or a payload of the wrong type, raises ``InvalidResult``. An exception from a callback
propagates as itself with a note naming the callback and the point (``BaseException``
untouched). A callbacks list is validated before any callback runs: a callback needs
at least one hook-shaped method (a declared point's name, ``on_event``, or a
``before_`` / ``after_`` / ``on_`` / ``wrap_`` name), and a name close to a point's
(``before_modle``) is refused unless it contains a point's name as whole words
(``before_model_hook``). When a dispatch starts, every hook-shaped name (those
prefixes, or another library's hook name such as ``before_tool_call``) must name a
point declared by then or be such a helper: a guard that would never be called is
``InvalidCallbacks`` with a did-you-mean (see ``docs/hooks.md``). Async dispatch
awaits ``async def`` methods and calls plain ones, except wraps: ``arun_wrap`` takes
``async def`` wraps only, since a plain one could not await its ``call_next``.
"""

from importlib.metadata import PackageNotFoundError, version

from returns.result import Failure, Result, Success

from hooks._adispatch import arun_after, arun_before, arun_on_error
from hooks._async_protocols import (
    AsyncAfterAgent,
    AsyncAfterModel,
    AsyncAfterOutput,
    AsyncAfterTool,
    AsyncBeforeAgent,
    AsyncBeforeModel,
    AsyncBeforeTool,
    AsyncOnEvent,
    AsyncOnModelError,
    AsyncOnOutputError,
    AsyncOnToolError,
    AsyncWrapModel,
    AsyncWrapTool,
)
from hooks._call_state import CallState
from hooks._compile import CompiledCallbacks, compile_callbacks
from hooks._contexts import AgentContext, ModelContext, ToolContext
from hooks._decisions import Approve, Decision, Edit, Reject, Respond
from hooks._dispatch import Callbacks, run_after, run_before, run_on_error
from hooks._errors import HookError, HookTimeout, InvalidCallbacks, InvalidResult, StopRun
from hooks._events import AsyncObserver, HookEvent, Observer, OutcomeTag, observing
from hooks._explain import ChainStep, Explanation, explain
from hooks._messages import (
    Message,
    ModelRequest,
    ModelResponse,
    OutputSpec,
    Role,
    ToolCall,
    ToolResult,
    ToolSpec,
    Usage,
)
from hooks._output import OutputContext
from hooks._parts import FilePart, ImagePart, Part, ReasoningPart
from hooks._placed import Match, Placed, Tier, audit, guard, matched, shadow
from hooks._points import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_OUTPUT,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_OUTPUT_ERROR,
    ON_TOOL_ERROR,
    WRAP_MODEL,
    WRAP_TOOL,
    AfterPoint,
    BeforePoint,
    ErrorPoint,
    PausablePoint,
    WrapPoint,
)
from hooks._policies.approval import RequireApproval
from hooks._policies.audit import AuditBroken, AuditHead, HashChainAudit
from hooks._policies.budget import Budget
from hooks._policies.loop_guard import LoopGuard
from hooks._policies.redact import Redact
from hooks._policies.truncate import TruncateToolResult
from hooks._policy import DispatchPolicy, Trace
from hooks._protocols import (
    AfterAgent,
    AfterModel,
    AfterOutput,
    AfterTool,
    BeforeAgent,
    BeforeModel,
    BeforeTool,
    OnEvent,
    OnModelError,
    OnOutputError,
    OnToolError,
    WrapModel,
    WrapTool,
)
from hooks._results import (
    BeforeResult,
    Cont,
    ErrorResult,
    Fallback,
    Halt,
    Outcome,
    PausableResult,
    Pause,
    Retry,
)
from hooks._state import Invocation, State, StateKey
from hooks._timed import TimedCallback, TimeoutRecord
from hooks._timeout import with_timeout
from hooks._tool_info import ToolAnnotations, ToolInfo
from hooks._wrap import arun_wrap, run_wrap

__all__ = [
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

try:
    __version__: str = version("hookline")
    """The installed distribution's version (``"0+unknown"`` when hookline is not installed)."""
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
