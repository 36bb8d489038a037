"""``PausedRun``: a paused run as an inbox lists it, and what a store keeps to list it fast.

A store keeps, beside a paused run's state, its root agent and its pending requests
(``summary``): listing runs reads those, never the whole states. What a store reads
back is checked (``pending_of``): a row that is not what hookline wrote is a
``ValueError`` naming the run and the store, never skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, NoReturn, cast

from hooks import ToolCall
from hooks._slots import slot_init
from runner._checks import got, int_at_least
from runner._pause.pending import DecisionKind, PendingRequest
from runner._pause.runstate import RunState, decode_request, encode_request

__all__ = ["PausedRun", "check_limit", "damaged", "parsed", "pending_of", "summary", "unread"]

_NOT_READ: Final = "its state is not a RunState's JSON"
_DECODER: Final = json.JSONDecoder()


@slot_init
@dataclass(frozen=True, slots=True)
class PausedRun:
    """A paused run a store keeps: whose it is, its root ``agent``, when it paused (``time``,
    Unix seconds when the store saved it) and the requests ``pending`` a resume decides.

    ``pending`` are in call order, as ``RunState.pending`` gives them; the whole state
    is ``store.load_paused(run_id)``.
    """

    run_id: str
    user_id: str
    session_id: str
    agent: str
    time: float
    pending: tuple[PendingRequest, ...]


def parsed(state_json: str) -> tuple[str, tuple[PendingRequest, ...]] | None:
    """A paused state's root agent and pending requests, or ``None`` when ``state_json``
    is not a ``RunState``'s JSON (listing the run then says why)."""
    try:
        state = RunState.from_json(state_json)
    except (TypeError, ValueError):
        return None
    return state.agent, state.pending


def summary(state_json: str) -> tuple[str, str] | None:
    """``parsed``, the pending requests as JSON text (what a file keeps beside the state)."""
    found = parsed(state_json)
    if found is None:
        return None
    pending = [encode_request(request) for request in found[1]]
    return found[0], json.dumps(pending, ensure_ascii=False, separators=(",", ":"))


def pending_of(text: object, run_id: str, store: str) -> tuple[PendingRequest, ...]:
    """The pending requests ``summary`` wrote as ``text``; a ``ValueError`` naming the run
    and the store when ``text`` is not that."""
    if type(text) is not str:
        _damaged(run_id, store, f"its pending requests must be JSON text, found {got(text)}")
    try:
        data, end = _DECODER.raw_decode(text)  # json.loads's parse, without its wrappers
    except (ValueError, RecursionError) as exc:
        _damaged(run_id, store, f"its pending requests are not JSON ({exc}): {text!r:.60}")
    if end != len(text):
        _damaged(
            run_id,
            store,
            f"its pending requests are not JSON (text after the value at {end}): {text!r:.60}",
        )
    if type(data) is not list:
        _damaged(run_id, store, f"its pending requests must be a JSON array, found {got(data)}")
    requests: list[PendingRequest] = []
    for item in cast("list[object]", data):
        request = _plain_request(item)
        if request is None:
            try:
                request = decode_request(item, f"pending[{len(requests)}]")
            except ValueError as exc:
                _damaged(run_id, store, str(exc))
        requests.append(request)
    return tuple(requests)


def _damaged(run_id: str, store: str, problem: str) -> NoReturn:
    damaged(f"paused run {run_id!r} in {store}", problem)


_PLAIN_REQUEST: Final = frozenset({"id", "call", "reason", "agent", "branch", "allowed"})
_PLAIN_CALL: Final = frozenset({"id", "name", "args"})
_DECISIONS: Final = frozenset({"approve", "edit", "reject", "respond"})


def _plain_request(item: Any) -> PendingRequest | None:  # JSON as read
    """The request ``item`` holds when it is the plain form ``encode_request`` writes for a
    paused call (no question; the call's arguments an object), checked field by field as
    ``decode_request`` checks it; ``None`` for anything else (which ``decode_request``
    reads, or refuses naming what is wrong). The inbox's listing reads thousands: no
    call here that is not needed."""
    fields = cast("dict[str, Any]", item) if type(item) is dict else None
    if fields is None or fields.keys() != _PLAIN_REQUEST:
        return None
    call: Any = fields["call"]
    kinds: Any = fields["allowed"]
    called = cast("dict[str, Any]", call) if type(call) is dict else None
    if called is None or type(kinds) is not list or called.keys() != _PLAIN_CALL:
        return None
    request_id: Any = fields["id"]
    reason: Any = fields["reason"]
    agent: Any = fields["agent"]
    branch: Any = fields["branch"]
    call_id: Any = called["id"]
    name: Any = called["name"]
    args: Any = called["args"]
    if (
        type(request_id) is not str
        or type(reason) is not str
        or type(agent) is not str
        or type(branch) is not str
        or type(call_id) is not str
        or type(name) is not str
        or type(args) is not dict
    ):
        return None
    for kind in cast("Iterable[Any]", kinds):
        if type(kind) is not str or kind not in _DECISIONS:
            return None
    return PendingRequest(
        id=request_id,
        call=ToolCall(call_id, name, cast("dict[str, Any]", args)),
        reason=reason,
        agent=agent,
        branch=branch,
        allowed=tuple(cast("list[DecisionKind]", kinds)),
    )


def unread(state: object) -> str:
    """Why a paused state ``summary`` could not read is not a ``RunState``."""
    try:
        RunState.from_json(cast("str", state))
    except (TypeError, ValueError) as exc:
        return f"{_NOT_READ} ({exc})"
    return _NOT_READ


def damaged(where: str, problem: str) -> NoReturn:
    """Refuse a paused run a store holds damaged."""
    msg = f"{where} is damaged: {problem}"
    raise ValueError(msg)


def check_limit(limit: object) -> int | None:
    """``limit`` of ``list_paused``: ``None`` (no bound) or an int >= 0."""
    return (
        None if limit is None else int_at_least("limit", limit, 0, expected="None or an int >= 0")
    )
