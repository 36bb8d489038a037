"""``Transcript``: a conversation that grows by appending, never by copying.

A turn of a long session must cost what a turn of a fresh one costs, so nothing on
the way from the store to the model copies the history. A transcript is an immutable
view of the first ``n`` messages of an append-only log. Extending the view at the
log's tip appends to the log in place: every older view still sees only its own
prefix, so views stay immutable. Extending a view that is not at the tip (two runs
that loaded the same session, or a run that dropped its last message) copies its
prefix into a new log once; that fork is the only copy.

``Conversation`` holds an agent's transcript as it grows during its turn; ``settled``
and ``answered`` are what a completed and a stopped run save (each looks at the end
of the history only, so saving costs the same however long it is).
"""

from __future__ import annotations

import operator
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice
from typing import Final, SupportsIndex, cast, final, overload

from hooks import Message

__all__ = ["Conversation", "Transcript", "answered", "settled"]


@final
class _Log:
    """The append-only list that transcripts view, and the lock that guards its tip.

    A fork names the log it copied from (``origin``) and how many of its first items
    are that log's very objects (``copied``), so ``common_prefix`` need not compare them.
    The origin is held weakly: a chain of forks never keeps old logs alive.
    """

    __slots__ = ("__weakref__", "copied", "items", "lock", "origin")

    def __init__(self, items: list[Message], origin: _Log | None = None, copied: int = 0) -> None:
        self.items: Final = items
        self.lock: Final = threading.Lock()
        self.origin: Final = None if origin is None else weakref.ref(origin)
        self.copied: Final = copied


@final
class Transcript(Sequence[Message]):
    """An immutable sequence of messages: ``head`` (e.g. a system message), then a log prefix.

    ``extend`` returns a new transcript and leaves this one as it was; it costs the
    number of messages added, not the length of the conversation.
    """

    __slots__ = ("_head", "_log", "_n")

    def __init__(self, messages: Iterable[Message] = (), /) -> None:
        self._head: tuple[Message, ...] = ()
        self._log = _Log(list(messages))
        self._n = len(self._log.items)

    @classmethod
    def _view(cls, head: tuple[Message, ...], log: _Log, n: int) -> Transcript:
        view = object.__new__(cls)
        view._head = head
        view._log = log
        view._n = n
        return view

    def extend(self, messages: Iterable[Message], /) -> Transcript:
        """This conversation followed by ``messages``."""
        added = list(messages)
        log = self._log
        with log.lock:
            if len(log.items) == self._n:
                log.items.extend(added)
                return Transcript._view(self._head, log, self._n + len(added))
        fork = _Log([*islice(log.items, self._n), *added], log, self._n)
        return Transcript._view(self._head, fork, len(fork.items))

    def append(self, message: Message, /) -> Transcript:
        """This conversation followed by ``message`` (``extend`` by one, the turn's hot path)."""
        log = self._log
        with log.lock:
            if len(log.items) == self._n:
                log.items.append(message)
                return Transcript._view(self._head, log, self._n + 1)
        fork = _Log([*islice(log.items, self._n), message], log, self._n)
        return Transcript._view(self._head, fork, len(fork.items))

    def last(self) -> Message | None:
        """The last message, or ``None`` when there is none."""
        if self._n:
            return self._log.items[self._n - 1]
        return self._head[-1] if self._head else None

    def headed(self, head: Sequence[Message], /) -> Transcript:
        """``head`` followed by this conversation's own messages (without its head)."""
        if not head and not self._head:  # no head to put or to drop: this very view
            return self
        return Transcript._view(tuple(head), self._log, self._n)

    def prefix(self, length: int, /) -> Transcript:
        """The first ``length`` messages (at least the head), without copying."""
        body = min(max(length - len(self._head), 0), self._n)
        return Transcript._view(self._head, self._log, body)

    def body(self) -> Transcript:
        """The conversation without its head."""
        if not self._head:
            return self
        return Transcript._view((), self._log, self._n)

    def common_prefix(self, other: Sequence[Message], /) -> int:
        """How many first messages ``other`` has in common with this one: the same objects.

        Costs nothing for a transcript grown, cut or forked from this one (or this one
        from it); any other sequence is compared object by object from the start.
        """
        if isinstance(other, Transcript) and other._head == self._head:
            shared = _shared(self._log, other._log)
            if shared is not None:
                return len(self._head) + min(shared, self._n, other._n)
        count = 0
        for mine, theirs in zip(self, other, strict=False):  # the shorter one ends it
            if mine is not theirs:
                break
            count += 1
        return count

    def __len__(self) -> int:
        return len(self._head) + self._n

    @overload
    def __getitem__(self, index: SupportsIndex, /) -> Message: ...
    @overload
    def __getitem__(self, index: slice, /) -> Sequence[Message]: ...
    def __getitem__(self, index: SupportsIndex | slice, /) -> Message | Sequence[Message]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if start == 0 and step == 1 and stop >= len(self._head):  # a prefix: still a view
                return self.prefix(stop)
            return tuple(self)[index]
        position = operator.index(index)  # a str or float index is a TypeError, as for a tuple
        length = len(self)
        if position < 0:
            position += length
        if not 0 <= position < length:
            msg = f"transcript index {index} out of range for {length} messages"
            raise IndexError(msg)
        head = len(self._head)
        return self._head[position] if position < head else self._log.items[position - head]

    def __iter__(self) -> Iterator[Message]:
        return chain(self._head, islice(self._log.items, self._n))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Transcript | tuple | list):
            return NotImplemented
        items = cast("Sequence[object]", other)  # what isinstance cannot say of the items
        return len(self) == len(items) and all(a == b for a, b in zip(self, items, strict=True))

    def __hash__(self) -> int:
        return hash(tuple(self))  # equal to the hash of the equal tuple

    def __reduce__(self) -> tuple[object, ...]:
        # The log's lock cannot be pickled: copy.deepcopy and pickle (a store that
        # persists what it is given) rebuild the transcript from its messages instead.
        return (_rebuild, (self._head, tuple(islice(self._log.items, self._n))))

    def __repr__(self) -> str:
        return f"Transcript({list(self)!r})" if len(self) <= 4 else f"<Transcript of {len(self)}>"


def _shared(a: _Log, b: _Log) -> int | None:
    """How many first items two logs share by construction: one log, or one a fork of the
    other; ``None`` when neither says."""
    if a is b:
        return len(a.items)
    if b.origin is not None and b.origin() is a:
        return b.copied
    if a.origin is not None and a.origin() is b:
        return a.copied
    return None


def _rebuild(head: tuple[Message, ...], body: tuple[Message, ...]) -> Transcript:
    """A transcript of ``head`` then ``body`` (what ``Transcript.__reduce__`` saves)."""
    return Transcript(body).headed(head)


@final
class Conversation:
    """An agent's conversation as it grows during its turn (what a stopped run saves)."""

    __slots__ = ("messages",)

    def __init__(self, messages: Transcript) -> None:
        self.messages = messages


def settled(history: Transcript) -> Transcript:
    """A completed run's history, its final answer without tool calls nobody will answer.

    A final answer comes from the model only without tool calls; one that a hook gave
    (a ``before_agent`` halt, an ``after_agent`` replacement) may carry some, which the
    next turn's model API would refuse as unanswered: the text is kept, the calls not.
    Looks at the last message only, so a turn costs the same however long the history.
    """
    last = history.last()
    if last is None or last.role != "assistant" or not last.tool_calls:
        return history
    return history.prefix(len(history) - 1).append(Message("assistant", last.content))


def answered(history: Transcript) -> Transcript:
    """``history`` without a last tool-calling turn whose calls did not all get results.

    A run stopped between a tool call and its result would otherwise save a
    conversation that model APIs refuse on the next turn.
    """
    answered: set[str | None] = set()
    for index in range(len(history) - 1, -1, -1):
        message = history[index]
        if message.role == "tool":
            answered.add(message.tool_call_id)
        elif message.role == "assistant" and message.tool_calls:
            if answered.issuperset(call.id for call in message.tool_calls):
                return history
            return history.prefix(index)
    return history
