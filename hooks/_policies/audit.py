"""``HashChainAudit``: every hook decision as a line of a tamper-evident JSON Lines file.

An observer: told every dispatch of every point (``HookEvent``: the point, the agent,
the tool and call, the outcome tag, the callback that decided, the error), including
calls a guard halted or paused, it appends one record per event to ``path``. Each
record holds its sequence number, the previous record's hash and the event; its
``hash`` is SHA-256 over the previous hash and the record's canonical JSON, and the
line is exactly that canonical JSON. ``HashChainAudit.verify(path)`` reads the file back and finds
any edited, inserted, dropped or reordered line, naming the first; a file cut after
its last good line is caught by comparing with a ``head`` kept elsewhere
(``audit.head``, written to another system as you go).

A record that could not be written (a full disk) is not lost silently: the next
record that is written first says how many events went missing, in the chain. One
process writes one file; each write is flushed (``fsync=True`` also syncs it to disk).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, cast, final

from hooks._errors import HookError
from hooks._events import HookEvent
from hooks._slots import slot_init

__all__ = ["AuditBroken", "AuditHead", "HashChainAudit"]

GENESIS: Final = "0" * 64
"""The ``prev`` of a chain's first record."""


@slot_init
@dataclass(frozen=True, slots=True)
class AuditHead:
    """Where a chain ends: how many records it holds and the last one's hash."""

    records: int
    hash: str


@final
class AuditBroken(HookError, ValueError):
    """An audit file is not the chain it was written as: ``line`` (from 1) says where."""

    def __init__(self, path: str, line: int, reason: str) -> None:
        self.path = path
        self.line = line
        self.reason = reason
        super().__init__(f"audit {path!r} is broken at line {line}: {reason}")


@final
class HashChainAudit:
    """Appends each hook decision to ``path`` as a hash-chained JSON line (see the module).

    Put it among the callbacks: ``callbacks=[HashChainAudit("audit.jsonl"), guard]``. An
    existing file is verified before the first append, and a broken one refused.
    """

    __slots__ = ("_head", "_lock", "_lost", "fsync", "path")

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = False) -> None:
        self.path: Final = os.fspath(path)
        self.fsync: Final = fsync
        self._lock = threading.Lock()
        self._head: AuditHead | None = None  # read from the file on the first append
        self._lost = 0

    @property
    def head(self) -> AuditHead:
        """Where the chain ends now: keep it elsewhere to catch a file cut short."""
        with self._lock:
            return self._current()

    def on_event(self, event: HookEvent, /) -> None:
        """Append ``event``'s record (after a note of events lost before it, if any)."""
        with self._lock:
            lost, self._lost = self._lost, 0
            try:
                head = self._current()
                with open(self.path, "a", encoding="utf-8", newline="\n") as file:
                    if lost:
                        head = _append(file, head, {"lost": lost})
                    head = _append(file, head, _event(event))
                    file.flush()
                    if self.fsync:
                        os.fsync(file.fileno())
            except (OSError, AuditBroken):
                self._lost = lost + 1  # said in the chain by the next record written
                raise
            self._head = head

    def _current(self) -> AuditHead:
        if self._head is None:
            path = Path(self.path)
            exists = path.exists() and path.stat().st_size > 0
            self._head = _verify(self.path, None) if exists else AuditHead(0, GENESIS)
        return self._head

    @staticmethod
    def verify(path: str | os.PathLike[str], *, head: AuditHead | None = None) -> AuditHead:
        """The head of the intact chain in ``path``; ``AuditBroken`` naming the first line
        that was edited, inserted, dropped or moved. With ``head`` (kept elsewhere), a
        file that ends before it is broken too."""
        return _verify(path, head)

    def __repr__(self) -> str:
        return f"HashChainAudit({self.path!r})"


def _verify(path: str | os.PathLike[str], head: AuditHead | None) -> AuditHead:
    name = os.fspath(path)
    current = AuditHead(0, GENESIS)
    with open(name, encoding="utf-8", newline="\n") as file:
        for number, line in enumerate(file, start=1):
            current = _check(name, number, line, current)
    if head is not None and head != current:
        reason = (
            f"it ends after {current.records} records with hash {current.hash[:12]}..., "
            f"the head kept says {head.records} records ending {head.hash[:12]}..."
        )
        raise AuditBroken(name, current.records, reason)
    return current


def _append(file: Any, head: AuditHead, event: dict[str, Any]) -> AuditHead:
    body = {"seq": head.records + 1, "prev": head.hash, "event": event}
    digest = _hash(head.hash, body)
    file.write(_canonical({**body, "hash": digest}) + "\n")
    return AuditHead(head.records + 1, digest)


def _check(path: str, number: int, line: str, head: AuditHead) -> AuditHead:
    if not line.endswith("\n"):
        raise AuditBroken(path, number, "the line is not ended (a write cut short)")
    try:
        parsed: object = json.loads(line)
    except ValueError as error:
        raise AuditBroken(path, number, f"not JSON ({error})") from None
    if type(parsed) is not dict:
        raise AuditBroken(path, number, "not a record of seq, prev, event and hash")
    record = cast("dict[str, Any]", parsed)
    if set(record) != {"seq", "prev", "event", "hash"}:
        raise AuditBroken(path, number, "not a record of seq, prev, event and hash")
    if record["seq"] != head.records + 1:
        reason = f"record {record['seq']!r} where record {head.records + 1} belongs"
        raise AuditBroken(path, number, f"{reason}: a line was dropped, added or moved")
    if record["prev"] != head.hash:
        raise AuditBroken(path, number, "it does not follow the line before it")
    body = {key: record[key] for key in ("seq", "prev", "event")}
    digest = _hash(head.hash, body)
    if record["hash"] != digest or line != _canonical(record) + "\n":
        raise AuditBroken(path, number, "its content was changed after it was written")
    return AuditHead(head.records + 1, digest)


def _hash(prev: str, body: dict[str, Any]) -> str:
    return hashlib.sha256(f"{prev}\n{_canonical(body)}".encode()).hexdigest()


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _event(event: HookEvent) -> dict[str, Any]:
    error = event.error
    return {
        "point": event.point,
        "agent": event.agent,
        "branch": event.branch,
        "outcome": event.outcome,
        "callback": event.callback,
        "tool": event.tool,
        "call_id": event.call_id,
        "attempt": event.attempt,
        "time": event.time,
        "run_id": event.run_id,
        "error": None if error is None else f"{type(error).__qualname__}: {error}",
    }
