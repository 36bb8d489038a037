"""Misspellings: which attribute names are close to a declared point's name.

A name within difflib ratio 0.8 of a declared point's name misspells it, unless it
contains a declared name as whole underscore-separated words (``before_model_hook``).
The answer is kept per name and caught up with the points declared since, comparing
only names of lengths that could match: a check never walks the whole registry twice.
"""

from __future__ import annotations

import threading
from difflib import SequenceMatcher
from typing import Final, final

from hooks._points import declarations, declared_since, kind_of

__all__ = ["misspells"]

_CUTOFF: Final = 0.8  # difflib's get_close_matches default, as 0.1 used it
_lock = threading.Lock()


@final
class _NearMisses:
    """Which names misspell a declared point, kept per name and caught up incrementally.

    ``near`` maps a name to ``(score, point)``: a score of 2.0 means "never a
    misspelling" (it is a point's name or contains one as whole words) and is final; a
    ratio >= 0.8 names the point it misspells; 0.0 means none so far. Both sides are
    indexed by length, since a ratio >= 0.8 needs lengths within 2/3 to 3/2 of each
    other and containing a point needs a longer name: a point declared later is
    compared with the cached names that could match it, never with the whole cache.
    """

    __slots__ = ("names", "near", "points", "synced")

    def __init__(self) -> None:
        self.near: dict[str, tuple[float, str]] = {}
        self.names: dict[int, list[str]] = {}  # cached names still open, by length
        self.points: dict[int, list[str]] = {}  # declared point names, by length
        self.synced = 0  # how many declared names the index accounts for

    def catch_up(self) -> None:
        """Account for the points declared since the last call; the caller holds ``_lock``."""
        new = declared_since(self.synced)
        for point in new:
            size = len(point)
            self.points.setdefault(size, []).append(point)
            for length, names in self.names.items():
                if length > size or _close_lengths(length, size):
                    for name in names:
                        entry = self.near[name]
                        if entry[0] <= 1.0:
                            self.near[name] = max(entry, _score(name, point))
        self.synced += len(new)

    def add(self, name: str) -> tuple[float, str]:
        """``name``'s entry against every declared point; the caller holds ``_lock``."""
        if len(self.near) >= _NEAR_SIZE:  # recomputed on demand; keeps odd workloads bounded
            self.near.clear()
            self.names.clear()
        entry = self.near[name] = self._score_all(name)
        if entry[0] <= 1.0:
            self.names.setdefault(len(name), []).append(name)
        return entry

    def _score_all(self, name: str) -> tuple[float, str]:
        if kind_of(name) is not None:
            return _NEVER
        words = name.split("_")
        for start in range(len(words)):
            for end in range(start + 1, len(words) + 1):
                if kind_of("_".join(words[start:end])) is not None:
                    return _NEVER
        best = (0.0, "")
        matcher: SequenceMatcher[str] = SequenceMatcher()
        matcher.set_seq2(name)
        size = len(name)
        for length in range(max(1, 2 * size // 3), 3 * size // 2 + 2):
            for point in self.points.get(length, ()):
                best = max(best, _ratio(matcher, point))
        return best


_NEVER: Final = (2.0, "")
_NEAR_SIZE: Final = 8192
_index = _NearMisses()


def misspells(name: str) -> str | None:
    """The declared point name ``name`` is a misspelling of, or ``None``."""
    entry = _index.near.get(name) if _index.synced == declarations() else None
    if entry is None:
        with _lock:
            _index.catch_up()
            entry = _index.near.get(name)
            if entry is None:
                entry = _index.add(name)
    score, point = entry
    return point if _CUTOFF <= score <= 1.0 else None


def _close_lengths(first: int, second: int) -> bool:
    """Whether strings of these lengths can reach the cutoff ratio at all."""
    return 2 * min(first, second) >= _CUTOFF * (first + second)


def _score(name: str, point: str) -> tuple[float, str]:
    if f"_{point}_" in f"_{name}_":
        return _NEVER
    matcher: SequenceMatcher[str] = SequenceMatcher()
    matcher.set_seq2(name)
    return _ratio(matcher, point)


def _ratio(matcher: SequenceMatcher[str], point: str) -> tuple[float, str]:
    # difflib.get_close_matches's filters, cheapest first; ties go to the greater name.
    matcher.set_seq1(point)
    if (
        matcher.real_quick_ratio() >= _CUTOFF
        and matcher.quick_ratio() >= _CUTOFF
        and (ratio := matcher.ratio()) >= _CUTOFF
    ):
        return (ratio, point)
    return (0.0, "")
