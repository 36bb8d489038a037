"""The errors the runner raises, under ``hooks.HookError`` like every hookline error.

::

    HookError
     +-- RunnerError
          +-- UnknownToolError (also LookupError)     the model called a tool nobody offers
          +-- ToolArgumentsError (also TypeError)     the model's arguments don't fit the tool
          +-- MaxStepsExceeded (also RuntimeError)    a run took more model turns than allowed
          +-- ScriptExhausted (also LookupError)      a ScriptedModel ran out of answers
          +-- SessionConflict (also RuntimeError)     another run saved the session first
          +-- SessionBusy (also RuntimeError)         another run holds the session's lease

Tool errors reach ``on_tool_error`` like any exception a tool raises; unrecovered,
they become an error ``ToolResult`` the model sees.
"""

from __future__ import annotations

from typing import final

from hooks import HookError

__all__ = [
    "MaxStepsExceeded",
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
