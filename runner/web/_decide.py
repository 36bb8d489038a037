"""A human's decisions from a request body, checked before anything resumes.

The body is ``{"decisions": {request_id: decision}}``, a decision one of
``{"kind": "approve"}``, ``{"kind": "edit", "args": {...}}``,
``{"kind": "reject", "message": "..."}``, ``{"kind": "respond", "value": ...}``. Each
must be one its request allows; an edit's arguments are checked against the tool's
JSON argument schema and an answer against the request's schema (``jsonschema``), so a
bad form comes back as a 422 naming the field, before a resume is tried. Every input is
hostile: wrong types, unknown ids, unknown kinds, oversized text are refused the same
way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, final

import jsonschema

from hooks import Approve, Decision, Edit, Reject, Respond
from runner import PendingRequest

__all__ = ["MAX_MESSAGE", "BadDecision", "parse_decisions"]

MAX_MESSAGE: Final = 4000
"""The longest rejection message taken (characters)."""


@final
class BadDecision(ValueError):
    """A decision the request does not allow, or whose form does not fit its schema."""


def parse_decisions(
    body: object,
    pending: Sequence[PendingRequest],
    schemas: Mapping[str, Mapping[str, Any]],
) -> dict[str, Decision]:
    """The decisions of ``body`` for ``pending``, checked; ``BadDecision`` says what is wrong.

    ``schemas`` are the tools' argument schemas by tool name (a tool without one takes
    any object). Every pending request must be decided: a resume answers them all.
    """
    if not isinstance(body, dict) or not isinstance(body.get("decisions"), dict):
        msg = 'the body must be a JSON object {"decisions": {request id: decision}}'
        raise BadDecision(msg)
    given: dict[object, object] = body["decisions"]
    by_id = {request.id: request for request in pending}
    unknown = [key for key in given if key not in by_id]
    if unknown:
        msg = f"no pending request has the id {str(unknown[0])[:80]!r}"
        raise BadDecision(msg)
    missing = [request_id for request_id in by_id if request_id not in given]
    if missing:
        msg = f"every pending request needs a decision; missing: {', '.join(missing)}"
        raise BadDecision(msg)
    return {
        request_id: _decision(by_id[request_id], given[request_id], schemas) for request_id in by_id
    }


def _decision(
    request: PendingRequest, raw: object, schemas: Mapping[str, Mapping[str, Any]]
) -> Decision:
    if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str):
        msg = f'request {request.id}: a decision is an object with a "kind"'
        raise BadDecision(msg)
    fields: dict[str, object] = raw
    kind = fields["kind"]
    if kind not in request.allowed:
        msg = f"request {request.id}: {str(kind)[:40]!r} is not one of {list(request.allowed)}"
        raise BadDecision(msg)
    if kind == "approve":
        return Approve()
    if kind == "reject":
        message = fields.get("message", "rejected")
        if not isinstance(message, str) or len(message) > MAX_MESSAGE:
            msg = f"request {request.id}: a rejection's message is text of at most {MAX_MESSAGE}"
            raise BadDecision(msg)
        return Reject(message or "rejected")
    if kind == "edit":
        args = fields.get("args")
        if not isinstance(args, dict):
            msg = f"request {request.id}: an edit's args are a JSON object"
            raise BadDecision(msg)
        _check(request, args, schemas.get(request.call.name))
        return Edit(args)
    value = fields.get("value")
    if not isinstance(value, dict):
        msg = f"request {request.id}: an answer's value is a JSON object"
        raise BadDecision(msg)
    _check(request, value, request.schema)
    return Respond(value)


def _check(request: PendingRequest, value: object, schema: Mapping[str, Any] | None) -> None:
    if schema is None:
        return
    try:
        jsonschema.Draft202012Validator.check_schema(dict(schema))
        validator = jsonschema.Draft202012Validator(dict(schema))
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
    except jsonschema.exceptions.SchemaError as exc:
        msg = f"request {request.id}: its schema is no JSON schema: {exc.message}"
        raise BadDecision(msg) from None
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "the value"
        msg = f"request {request.id}: {where}: {error.message}"
        raise BadDecision(msg)
