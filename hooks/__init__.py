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

- results: ``Cont`` / ``Halt`` (before hooks), ``Retry`` / ``Fallback`` / ``Failure``
  (error hooks), ``Success`` / ``Failure`` outcomes (after hooks);
- points: ``BeforePoint``, ``AfterPoint``, ``ErrorPoint`` (each ``[C, T]``: context
  first) and the eight built-ins, which check payload types at run time;
- async twins of the protocols (``AsyncBeforeModel`` ...) for ``async def`` methods;
- dispatch: ``run_before``, ``run_after``, ``run_on_error`` and the ``arun_*`` twins,
  over a list or its ``compile_callbacks`` form, under a ``DispatchPolicy``; a
  ``Trace`` tells which callback decided;
- vocabulary: the contexts, messages and the invocation ``State`` hooks receive;
- observers: ``on_event(HookEvent)``, or ``observing(fn)``.

Dispatch rules: callbacks run in list order, and one without the point's method is
skipped; an empty chain returns its input unchanged (the same object). Before: each
``Cont(ctx')`` hands ``ctx'`` on and the first ``Halt`` ends the chain. After: every
callback runs on the previous one's outcome. Error: each gets the previous ``Failure``;
the first ``Retry`` or ``Fallback`` ends the chain, else the last ``Failure`` returns.
Anything else, or a payload of the wrong type, raises ``InvalidResult``. An exception
from a callback propagates as itself with a note naming the callback and the point
(``BaseException`` untouched). A callbacks list is validated before any callback runs:
a callback needs at least one hook-shaped method (a declared point's name,
``on_event``, or a ``before_`` / ``after_`` / ``on_`` / ``wrap_`` name), and a name
close to a point's (``before_modle``) is refused unless it contains a point's name as
whole words (``before_model_hook``).
"""

from importlib.metadata import PackageNotFoundError, version

from returns.result import Failure, Result, Success

from hooks._adispatch import arun_after, arun_before, arun_on_error
from hooks._async_protocols import (
    AsyncAfterAgent,
    AsyncAfterModel,
    AsyncAfterTool,
    AsyncBeforeAgent,
    AsyncBeforeModel,
    AsyncBeforeTool,
    AsyncOnEvent,
    AsyncOnModelError,
    AsyncOnToolError,
)
from hooks._compile import CompiledCallbacks, compile_callbacks
from hooks._contexts import AgentContext, ModelContext, ToolContext
from hooks._dispatch import Callbacks, run_after, run_before, run_on_error
from hooks._errors import HookError, InvalidCallbacks, InvalidResult, StopRun
from hooks._events import AsyncObserver, HookEvent, Observer, OutcomeTag, observing
from hooks._messages import (
    Message,
    ModelRequest,
    ModelResponse,
    Role,
    ToolCall,
    ToolResult,
    ToolSpec,
)
from hooks._points import (
    AFTER_AGENT,
    AFTER_MODEL,
    AFTER_TOOL,
    BEFORE_AGENT,
    BEFORE_MODEL,
    BEFORE_TOOL,
    ON_MODEL_ERROR,
    ON_TOOL_ERROR,
    AfterPoint,
    BeforePoint,
    ErrorPoint,
)
from hooks._policy import DispatchPolicy, Trace
from hooks._protocols import (
    AfterAgent,
    AfterModel,
    AfterTool,
    BeforeAgent,
    BeforeModel,
    BeforeTool,
    OnEvent,
    OnModelError,
    OnToolError,
)
from hooks._results import BeforeResult, Cont, ErrorResult, Fallback, Halt, Outcome, Retry
from hooks._state import Invocation, State, StateKey

__all__ = [
    "AFTER_AGENT",
    "AFTER_MODEL",
    "AFTER_TOOL",
    "BEFORE_AGENT",
    "BEFORE_MODEL",
    "BEFORE_TOOL",
    "ON_MODEL_ERROR",
    "ON_TOOL_ERROR",
    "AfterAgent",
    "AfterModel",
    "AfterPoint",
    "AfterTool",
    "AgentContext",
    "AsyncAfterAgent",
    "AsyncAfterModel",
    "AsyncAfterTool",
    "AsyncBeforeAgent",
    "AsyncBeforeModel",
    "AsyncBeforeTool",
    "AsyncObserver",
    "AsyncOnEvent",
    "AsyncOnModelError",
    "AsyncOnToolError",
    "BeforeAgent",
    "BeforeModel",
    "BeforePoint",
    "BeforeResult",
    "BeforeTool",
    "Callbacks",
    "CompiledCallbacks",
    "Cont",
    "DispatchPolicy",
    "ErrorPoint",
    "ErrorResult",
    "Failure",
    "Fallback",
    "Halt",
    "HookError",
    "HookEvent",
    "InvalidCallbacks",
    "InvalidResult",
    "Invocation",
    "Message",
    "ModelContext",
    "ModelRequest",
    "ModelResponse",
    "Observer",
    "OnEvent",
    "OnModelError",
    "OnToolError",
    "Outcome",
    "OutcomeTag",
    "Result",
    "Retry",
    "Role",
    "State",
    "StateKey",
    "StopRun",
    "Success",
    "ToolCall",
    "ToolContext",
    "ToolResult",
    "ToolSpec",
    "Trace",
    "__version__",
    "arun_after",
    "arun_before",
    "arun_on_error",
    "compile_callbacks",
    "observing",
    "run_after",
    "run_before",
    "run_on_error",
]

try:
    __version__: str = version("hookline")
    """The installed distribution's version (``"0+unknown"`` when hookline is not installed)."""
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
