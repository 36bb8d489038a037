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
from typing import Any, Final, cast, final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError, ValidationError

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

    ``schemas`` are the argument schemas of the requests' tools, by request id (a
    request without one takes any object). Every pending request must be decided: a
    resume answers them all.
    """
    given = _object((_object(body) or {}).get("decisions"))
    if given is None:  # no object, or one without a decisions object
        msg = 'the body must be a JSON object {"decisions": {request id: decision}}'
        raise BadDecision(msg)
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


def _object(value: object) -> dict[str, object] | None:
    """``value`` if it is a JSON object (a dict), else ``None``."""
    return cast(dict[str, object], value) if isinstance(value, dict) else None


def _decision(
    request: PendingRequest, raw: object, schemas: Mapping[str, Mapping[str, Any]]
) -> Decision:
    fields = _object(raw) or {}
    kind = fields.get("kind")
    if not isinstance(kind, str):
        msg = f'request {request.id}: a decision is an object with a "kind"'
        raise BadDecision(msg)
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
        args = _object(fields.get("args"))
        if args is None:
            msg = f"request {request.id}: an edit's args are a JSON object"
            raise BadDecision(msg)
        _check(request, args, schemas.get(request.id))
        return Edit(args)
    value = _object(fields.get("value"))
    if value is None:
        msg = f"request {request.id}: an answer's value is a JSON object"
        raise BadDecision(msg)
    _check(request, value, request.schema)
    return Respond(value)


def _check(request: PendingRequest, value: object, schema: Mapping[str, Any] | None) -> None:
    if schema is None:
        return
    try:
        Draft202012Validator.check_schema(dict(schema))
        validator = Draft202012Validator(dict(schema))
        # jsonschema's stubs leave iter_errors' overloads partly open
        errors: list[ValidationError] = list(validator.iter_errors(cast(Any, value)))  # pyright: ignore[reportUnknownMemberType]
        # the shallowest error first: a missing field before what is wrong inside another
        error = min(errors, key=lambda each: len(each.absolute_path), default=None)
    except SchemaError as exc:
        msg = f"request {request.id}: its schema is no JSON schema: {exc.message}"
        raise BadDecision(msg) from None
    if error is not None:
        where = "/".join(map(str, error.absolute_path)) or "the value"
        msg = f"request {request.id}: {where}: {error.message}"
        raise BadDecision(msg)
