"""hookline's runner: the agent loop that threads every callback.

::

    agent = Agent("assistant", ScriptedModel(rules=[...]), tools=[add], callbacks=[audit])
    with Runner(agent, retry=RetryPolicy(max_attempts=3)) as runner:
        result = runner.run("what is 2 + 3?", callbacks=[guards])
    result.output, result.status, result.events

- ``Agent`` (model, tools, callbacks, sub-agents) and ``Runner`` (``run`` /
  ``run_async``, retry budget, ``max_steps``, sessions);
- models: the ``Model`` protocol, ``ScriptedModel`` with ``Rule`` (no network) and
  ``OpenAIChatModel`` (extra ``hookline[openai]``);
- ready-made error handlers: ``RetryTransient``, ``FallbackModel``, ``AsyncFallbackModel``;
- tools: plain functions (``FunctionTool``) or objects with ``name`` and ``run(args)``;
- what a run leaves: ``RunResult`` and its typed ``Event`` records; ``Runner.stream``
  yields them as they happen, with ``TextDelta`` pieces (the ``on_delta`` hook sees each);
- pause and resume: a ``before_tool`` hook's ``Pause`` ends the run ``"paused"`` with
  ``PendingRequest``s and a ``RunState`` (JSON); ``Runner.resume(state, {id: Approve() |
  Edit(args) | Reject(message)})`` goes on, in another process too;
- sessions: the versioned ``SessionStore`` protocol with leases, ``InMemorySessions`` (the
  default) and ``SQLiteSessionStore`` (one file, shared by processes), ``Transcript``;
- durable runs: ``DurableRunner`` runs an agent as DBOS workflows that survive a crash
  (extra ``hookline[dbos]``); a tool's ``idempotency_key()`` makes its effect happen once;
- the vocabulary hooks receive (contexts, messages, ``State``, ``StopRun``) is
  re-exported; results, hook points, protocols and dispatch come from ``hooks``.
"""

from hooks import (
    AgentContext,
    Approve,
    Edit,
    HookEvent,
    Invocation,
    Message,
    ModelContext,
    ModelRequest,
    ModelResponse,
    Pause,
    Reject,
    State,
    StateKey,
    StopRun,
    ToolCall,
    ToolContext,
    ToolResult,
    ToolSpec,
    Usage,
    observing,
)
from runner._agent import Agent
from runner._durable.idempotency import idempotency_key
from runner._durable.runner import DurableRunner
from runner._errors import (
    InvalidDecisions,
    MaxStepsExceeded,
    ResumeRefused,
    RunnerError,
    ScriptExhausted,
    SessionBusy,
    SessionConflict,
    ToolArgumentsError,
    UnknownToolError,
)
from runner._events import (
    AttemptDiscardedEvent,
    ErrorEvent,
    Event,
    FallbackEvent,
    ModelAttemptEvent,
    ModelChunk,
    ModelResponseEvent,
    Operation,
    PauseEvent,
    RetryEvent,
    RunFinishedEvent,
    RunResult,
    RunStartedEvent,
    RunStatus,
    StopEvent,
    StreamEvent,
    TextDelta,
    ToolAttemptEvent,
    ToolCallDelta,
    ToolCallEvent,
    ToolResultEvent,
    UserMessageEvent,
)
from runner._models.handlers import AsyncFallbackModel, FallbackModel, RetryTransient
from runner._models.model import (
    AsyncModel,
    AsyncStreamingModel,
    Model,
    Rule,
    ScriptedModel,
    ScriptItem,
    StreamingModel,
)
from runner._models.openai.chat import OpenAIChatModel
from runner._models.transient import is_transient, retry_after
from runner._pause.pending import PendingRequest
from runner._pause.runstate import RunState
from runner._retry import RetryPolicy
from runner._runner import Runner
from runner._sessions.sqlite.store import SQLiteSessionStore
from runner._sessions.store import InMemorySessions, Session, SessionStore
from runner._sessions.transcript import Transcript
from runner._streaming.delta import ON_DELTA, AsyncOnDelta, DeltaContext, OnDelta
from runner._tools.tools import AsyncTool, FunctionTool, Tool, as_tool

__all__ = [
    "ON_DELTA",
    "Agent",
    "AgentContext",
    "Approve",
    "AsyncFallbackModel",
    "AsyncModel",
    "AsyncOnDelta",
    "AsyncStreamingModel",
    "AsyncTool",
    "AttemptDiscardedEvent",
    "DeltaContext",
    "DurableRunner",
    "Edit",
    "ErrorEvent",
    "Event",
    "FallbackEvent",
    "FallbackModel",
    "FunctionTool",
    "HookEvent",
    "InMemorySessions",
    "InvalidDecisions",
    "Invocation",
    "MaxStepsExceeded",
    "Message",
    "Model",
    "ModelAttemptEvent",
    "ModelChunk",
    "ModelContext",
    "ModelRequest",
    "ModelResponse",
    "ModelResponseEvent",
    "OnDelta",
    "OpenAIChatModel",
    "Operation",
    "Pause",
    "PauseEvent",
    "PendingRequest",
    "Reject",
    "ResumeRefused",
    "RetryEvent",
    "RetryPolicy",
    "RetryTransient",
    "Rule",
    "RunFinishedEvent",
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
    "State",
    "StateKey",
    "StopEvent",
    "StopRun",
    "StreamEvent",
    "StreamingModel",
    "TextDelta",
    "Tool",
    "ToolArgumentsError",
    "ToolAttemptEvent",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallEvent",
    "ToolContext",
    "ToolResult",
    "ToolResultEvent",
    "ToolSpec",
    "Transcript",
    "UnknownToolError",
    "Usage",
    "UserMessageEvent",
    "as_tool",
    "idempotency_key",
    "is_transient",
    "observing",
    "retry_after",
]
