"""A paused run as AG-UI interrupts, and a client's resume entries as decisions.

Each ``PendingRequest`` is one ``Interrupt`` whose id is ``"<hookline run id>/<request
id>"``: the resume that answers it names the paused run, whose state the endpoint then
loads from the runner's session store -- never from the client. The answer's shape is
the interrupt's ``responseSchema``:

- a paused call (``reason`` ``"hookline.approval"``): ``{"decision": "approve"}``,
  ``{"decision": "edit", "args": {...}}`` (``args`` under the tool's argument schema) or
  ``{"decision": "reject", "message": "..."}``, as the request allows;
- a tool's question (an MCP input request, ``reason`` ``"hookline.input"``): the answer
  itself, under the schema the tool asked with.

A resume entry of status ``"cancelled"`` rejects its request.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, cast

from ag_ui.core import Interrupt, ResumeEntry

from hooks import Approve, Decision, Edit, Reject, Respond, ToolSpec
from runner import PendingRequest, RunState

__all__ = ["Refusal", "decisions", "interrupt_id", "interrupts", "paused_run_id"]

_CANCELLED: Final = "cancelled in the AG-UI client"


class Refusal(ValueError):
    """A request the endpoint refuses: ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status: Final = status


def interrupt_id(run_id: str, request: PendingRequest) -> str:
    """The interrupt id of ``request`` of paused run ``run_id``."""
    return f"{run_id}/{request.id}"


def interrupts(
    run_id: str,
    pending: Sequence[PendingRequest],
    specs: Callable[[str, str], ToolSpec | None],
) -> list[Interrupt]:
    """One ``Interrupt`` per pending request of paused run ``run_id``, in call order."""
    return [
        Interrupt(
            id=interrupt_id(run_id, request),
            reason="hookline.input" if request.kind == "input" else "hookline.approval",
            message=request.reason,
            tool_call_id=request.call.id,
            response_schema=_schema(request, specs),
            metadata={
                "hookline": {
                    "agent": request.agent,
                    "tool": request.call.name,
                    "allowed": list(request.allowed),
                }
            },
        )
        for request in pending
    ]


def _schema(
    request: PendingRequest, specs: Callable[[str, str], ToolSpec | None]
) -> dict[str, Any]:
    if request.kind == "input":
        return dict(request.schema) if request.schema is not None else {"type": "object"}
    options: list[dict[str, Any]] = []
    for kind in request.allowed:
        properties: dict[str, Any] = {"decision": {"const": kind}}
        required = ["decision"]
        if kind == "edit":
            spec = specs(request.agent, request.call.name)
            properties["args"] = dict(spec.parameters) if spec is not None else {"type": "object"}
            required.append("args")
        elif kind == "reject":
            properties["message"] = {"type": "string"}
        options.append(
            {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            }
        )
    return {"oneOf": options}


def paused_run_id(entries: Sequence[ResumeEntry]) -> str:
    """The one hookline run the resume entries answer (``Refusal`` 422 unless exactly one)."""
    runs = {entry.interrupt_id.rpartition("/")[0] for entry in entries}
    if "" in runs:
        bad = next(e.interrupt_id for e in entries if not e.interrupt_id.rpartition("/")[0])
        raise Refusal(422, f"resume: interrupt id {bad!r:.120} is not one this endpoint gave")
    if len(runs) != 1:
        raise Refusal(422, f"resume: the entries answer {len(runs)} runs; one resume, one run")
    return runs.pop()


def decisions(state: RunState, entries: Sequence[ResumeEntry]) -> dict[str, Decision]:
    """A decision per pending request of ``state``, from the entries answering them.

    ``Refusal`` 422 when an entry answers no pending request, a request has no entry
    or two, or an answer does not fit its request.
    """
    pending = {interrupt_id(state.run_id, request): request for request in state.pending}
    given: dict[str, ResumeEntry] = {}
    for entry in entries:
        if entry.interrupt_id not in pending:
            msg = f"resume: interrupt {entry.interrupt_id!r:.160} is not pending in this run"
            raise Refusal(422, msg)
        if entry.interrupt_id in given:
            raise Refusal(422, f"resume: interrupt {entry.interrupt_id!r:.160} answered twice")
        given[entry.interrupt_id] = entry
    missing = [key for key in pending if key not in given]
    if missing:
        raise Refusal(422, f"resume: no answer for interrupt {', '.join(missing)}")
    return {pending[key].id: _decision(pending[key], entry) for key, entry in given.items()}


def _decision(request: PendingRequest, entry: ResumeEntry) -> Decision:
    if entry.status == "cancelled":
        return Reject(_CANCELLED)
    payload: object = entry.payload
    where = f"resume: interrupt {entry.interrupt_id}"
    if not _is_object(payload):
        msg = f"{where}: the payload must be a JSON object, got {type(payload).__name__}"
        raise Refusal(422, msg)
    answer = cast("Mapping[str, Any]", payload)
    if request.kind == "input":
        return Respond(answer)
    kind = answer.get("decision")
    if kind not in request.allowed:
        msg = f"{where}: decision must be one of {list(request.allowed)}, got {kind!r:.60}"
        raise Refusal(422, msg)
    extra = set(answer) - {"decision", "args" if kind == "edit" else "message"}
    if extra:
        raise Refusal(422, f"{where}: unexpected keys {sorted(extra)} for decision {kind!r}")
    if kind == "approve":
        return Approve()
    if kind == "edit":
        args: object = answer.get("args")
        if not _is_object(args):
            raise Refusal(422, f"{where}: an edit needs args, a JSON object")
        return Edit(cast("Mapping[str, Any]", args))
    message: object = answer.get("message", "rejected in the AG-UI client")
    if not isinstance(message, str):
        raise Refusal(422, f"{where}: a rejection's message must be a string")
    return Reject(message)


def _is_object(value: object) -> bool:
    """Whether ``value`` is a JSON object: a mapping whose keys are all strings."""
    if not isinstance(value, Mapping):
        return False
    keys: Mapping[object, object] = cast("Mapping[object, object]", value)
    return all(isinstance(key, str) for key in keys)
