"""The errors the runner raises, under ``hooks.HookError`` like every hookline error.

::

    HookError
     +-- RunnerError
          +-- UnknownToolError (also LookupError)     the model called a tool nobody offers
          +-- ToolArgumentsError (also TypeError)     the model's arguments don't fit the tool
          +-- MaxStepsExceeded (also RuntimeError)    a run took more model turns than allowed
          +-- ScriptExhausted (also LookupError)      a ScriptedModel ran out of answers
          +-- SessionConflict (also RuntimeError)     another run saved the session first
          +-- ResumeRefused (also RuntimeError)       a RunState that cannot go on here
          +-- InvalidDecisions (also ValueError)      resume's decisions don't fit its requests
          +-- SessionBusy (also RuntimeError)         another run holds the session's lease
          +-- ProviderError                           a model server's answer is no answer
          +-- ModelTimeout (also TimeoutError)        a model call passed its deadline
          +-- OutputValidationError (also ValueError) an answer that does not fit output_type
          +-- MCPError                                an MCP server could not answer a call
          |    +-- MCPTimeout (also TimeoutError)     an MCP call passed its deadline
          +-- MCPToolError                            an MCP tool answered with isError
          +-- MCPInputRequired                        an MCP tool asked a question (a pause)

Tool errors reach ``on_tool_error`` like any exception a tool raises; unrecovered,
they become an error ``ToolResult`` the model sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, final

from hooks import HookError, ToolResult

__all__ = [
    "InvalidDecisions",
    "MCPError",
    "MCPInputRequired",
    "MCPTimeout",
    "MCPToolError",
    "MaxStepsExceeded",
    "ModelTimeout",
    "OutputValidationError",
    "ProviderError",
    "ResumeRefused",
    "RunnerError",
    "ScriptExhausted",
    "SessionBusy",
    "SessionConflict",
    "ToolArgumentsError",
    "UnknownToolError",
]


class RunnerError(HookError):
    """Base of the errors the runner itself raises."""


@final
class UnknownToolError(RunnerError, LookupError):
    """The model called ``name``, which is none of the agent's tools (``available``)."""

    def __init__(self, name: str, available: tuple[str, ...]) -> None:
        self.name = name
        self.available = available
        offered = ", ".join(available) or "none"
        super().__init__(f"the model called unknown tool {name!r}; the agent offers: {offered}")


@final
class ToolArgumentsError(RunnerError, TypeError):
    """The model's ``args`` for tool ``name`` do not fit its signature: ``problem`` says how."""

    def __init__(self, name: str, args: object, problem: str) -> None:
        self.name = name
        self.args_given = args
        self.problem = problem
        super().__init__(f"bad arguments for tool {name!r}: {problem}; got {args!r:.120}")


@final
class MaxStepsExceeded(RunnerError, RuntimeError):
    """Agent ``agent`` asked for more than ``max_steps`` model turns in one run."""

    def __init__(self, agent: str, max_steps: int) -> None:
        self.agent = agent
        self.max_steps = max_steps
        super().__init__(
            f"agent {agent!r} did not finish within max_steps={max_steps} model turns; "
            "raise Runner(max_steps=...) or check for a tool-call loop"
        )


@final
class OutputValidationError(RunnerError, ValueError):
    """Agent ``agent``'s answer ``attempt`` (from 1 in its turn) does not fit its
    ``output_type``: ``errors`` says where and why, a line each, and ``raw`` is the JSON
    (or text) the model gave.

    ``on_output_error`` hooks receive it; unrecovered (the retry budget spent, or a hook's
    ``Failure``), the run raises it, with a note saying how many answers were tried.
    """

    def __init__(
        self, agent: str, output_type: str, errors: tuple[str, ...], raw: str, attempt: int
    ) -> None:
        self.agent = agent
        self.output_type = output_type
        self.errors = errors
        self.raw = raw
        self.attempt = attempt
        said = "; ".join(errors)
        super().__init__(
            f"agent {agent!r}: answer {attempt} does not fit output_type {output_type}: "
            f"{said}; got {raw!r:.200}"
        )


@final
class ScriptExhausted(RunnerError, LookupError):
    """A ``ScriptedModel`` was asked for answer number ``call`` but holds no more."""

    def __init__(self, call: int) -> None:
        self.call = call
        super().__init__(
            f"ScriptedModel has no answer for call {call}: its script is used up "
            "and no rule matched (give it more items, rules or a default)"
        )


@final
class SessionConflict(RunnerError, RuntimeError):
    """A run's save was refused: the session was saved (or deleted) since the run loaded it.

    ``expected`` is the version the run loaded, ``found`` the store's version now. The
    run's turn is not lost silently: it raises this, and the session keeps the other turn.
    """

    def __init__(self, user_id: str, session_id: str, *, expected: int, found: int) -> None:
        self.user_id = user_id
        self.session_id = session_id
        self.expected = expected
        self.found = found
        super().__init__(
            f"session {session_id!r} of user {user_id!r} was saved by another run "
            f"(version {found}) since this run loaded it (version {expected}); "
            "this run's turn was not saved"
        )


@final
class ResumeRefused(RunnerError, RuntimeError):
    """A ``RunState`` that cannot go on here: not paused, resumed already, or bound to
    agents and tools this runner does not have. ``run_id`` names the run."""

    def __init__(self, run_id: str, problem: str) -> None:
        self.run_id = run_id
        self.problem = problem
        super().__init__(f"run {run_id!r} cannot be resumed: {problem}")

    @classmethod
    def moved_on(cls, run_id: str, found: int, expected: int) -> ResumeRefused:
        """The session was saved since the run paused (it was resumed, or another run ran)."""
        return cls(
            run_id,
            f"its session is at version {found}, not the version {expected} it paused on: "
            "the run was resumed already, or another run used the session since",
        )


@final
class InvalidDecisions(RunnerError, ValueError):
    """``resume``'s decisions do not fit the paused run's requests: ``missing`` request ids
    got no decision, ``unknown`` ones name no request, ``wrong`` got no ``Decision``;
    ``misfit`` says by request id why its decision cannot answer it (a kind the request
    does not allow, a ``Respond`` whose value does not fit the question's schema)."""

    def __init__(
        self,
        run_id: str,
        *,
        missing: tuple[str, ...] = (),
        unknown: tuple[str, ...] = (),
        wrong: tuple[str, ...] = (),
        misfit: Mapping[str, str] | None = None,
    ) -> None:
        self.run_id = run_id
        self.missing = missing
        self.unknown = unknown
        self.wrong = wrong
        self.misfit = {} if misfit is None else dict(misfit)
        parts: list[str] = []
        if missing:
            parts.append(f"no decision for pending request(s) {', '.join(missing)}")
        if unknown:
            parts.append(f"decision(s) for unknown request(s) {', '.join(unknown)}")
        if wrong:
            parts.append(
                f"request(s) {', '.join(wrong)} got something other than "
                "Approve(), Edit(args), Reject(message) or Respond(value)"
            )
        parts.extend(f"request {key}: {problem}" for key, problem in self.misfit.items())
        super().__init__(f"run {run_id!r}: {'; '.join(parts)}")


@final
class SessionBusy(RunnerError, RuntimeError):
    """A run could not take the session's lease: run ``holder`` (another owner) holds it.

    The store enforces one run per session at a time, across runners and processes; a
    lease its holder never released (a process that died) expires after its ttl.
    """

    def __init__(self, user_id: str, session_id: str, *, holder: str) -> None:
        self.user_id = user_id
        self.session_id = session_id
        self.holder = holder
        super().__init__(
            f"session {session_id!r} of user {user_id!r} is busy: run {holder!r} holds its "
            "lease; a session takes one run at a time (try again when that run has ended)"
        )


@final
class ProviderError(RunnerError):
    """A model server answered something that is no answer: ``problem`` says what.

    It names where the answer came from and what it was: ``url``, ``model``, the HTTP
    ``status``, the ``content_type`` and the first bytes of the body (``head``).
    ``transient`` says whether the same request may well succeed again (a stream cut
    off before its end) or not (a server that answers HTML); ``RetryTransient`` reads it.
    """

    def __init__(
        self,
        problem: str,
        *,
        url: str,
        model: str,
        status: int | None = None,
        content_type: str | None = None,
        head: bytes = b"",
        transient: bool = False,
    ) -> None:
        self.problem = problem
        self.url = url
        self.model = model
        self.status = status
        self.content_type = content_type
        self.head = head
        self.transient = transient
        where = f"status {status}" if status is not None else "no status"
        kind = f"content type {content_type!r}" if content_type is not None else "no content type"
        first = f"; it began {head!r}" if head else ""
        super().__init__(f"model {model!r} at {url}: {problem} ({where}, {kind}{first})")


@final
class ModelTimeout(RunnerError, TimeoutError):
    """A model call did not finish within its total ``deadline`` (seconds), ``model`` names
    the model. Transient: ``RetryTransient`` retries it, as any ``TimeoutError``."""

    def __init__(self, model: str, deadline: float, *, url: str | None = None) -> None:
        self.model = model
        self.deadline = deadline
        self.url = url
        at = f" at {url}" if url is not None else ""
        super().__init__(f"model {model!r}{at} did not answer within its deadline of {deadline:g}s")


class MCPError(RunnerError):
    """An MCP server gave no answer to a call: ``problem`` says why.

    ``server`` is the ``MCPTools`` name, ``tool`` the server's own tool name (``None``
    when listing the tools failed), ``code`` the JSON-RPC error code when the server
    sent one. ``transient`` says whether the same call may well succeed again: a lost
    connection (the next call reconnects) or a deadline is, an error the server
    answered is not; ``RetryTransient`` reads it.
    """

    def __init__(
        self,
        server: str,
        tool: str | None,
        problem: str,
        *,
        code: int | None = None,
        transient: bool = False,
    ) -> None:
        self.server = server
        self.tool = tool
        self.problem = problem
        self.code = code
        self.transient = transient
        what = f"tool {tool!r}" if tool is not None else "listing the tools"
        coded = f" (code {code})" if code is not None else ""
        super().__init__(f"MCP server {server!r}, {what}: {problem}{coded}")


@final
class MCPTimeout(MCPError, TimeoutError):
    """An MCP call did not finish within its ``deadline`` (seconds); transient."""

    def __init__(self, server: str, tool: str | None, deadline: float) -> None:
        self.deadline = deadline
        super().__init__(
            server, tool, f"no answer within the deadline of {deadline:g}s", transient=True
        )


@final
class MCPToolError(RunnerError):
    """An MCP tool answered its call with ``isError: true``: ``content`` is its text.

    ``result`` is the whole answer as a ``ToolResult`` (its parts and structured
    content included), for an error hook that recovers with what the tool said.
    """

    def __init__(self, server: str, tool: str, result: ToolResult) -> None:
        self.server = server
        self.tool = tool
        self.content = result.content
        self.result = result
        super().__init__(f"MCP tool {tool!r} of server {server!r} failed: {result.content}")


@final
class MCPInputRequired(RunnerError):
    """An MCP tool asked a question during its call (an elicitation in an
    ``InputRequiredResult``): ``message`` and the ``schema`` of the answer it wants,
    ``key`` and ``state`` what the call sends back with the answer.

    Never seen by hooks: the call pauses with a request of kind ``"input"``.
    """

    def __init__(
        self,
        server: str,
        tool: str,
        message: str,
        *,
        schema: Mapping[str, Any],
        key: str,
        state: str | None,
    ) -> None:
        self.server = server
        self.tool = tool
        self.message = message
        self.schema = schema
        self.key = key
        self.state = state
        super().__init__(f"MCP tool {tool!r} of server {server!r} asks: {message}")
