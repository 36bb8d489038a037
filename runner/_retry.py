"""How many times an operation is tried, and how long to wait between tries."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from hooks._slots import slot_init
from runner._checks import non_negative_float, positive_int

__all__ = ["RetryPolicy"]


@slot_init
@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The runner's retry budget, per operation (one model call, one tool call).

    ``max_attempts`` counts every call of the operation, the first included, so
    ``max_attempts=1`` never retries. Wait ``n`` (after attempt ``n`` failed) is
    ``min(max_delay, base_delay * 2 ** (n - 1))`` scaled by a random factor in
    ``[1 - jitter, 1 + jitter]``; ``Retry(delay=...)`` replaces one wait, which is
    capped at ``max_delay`` too, so no handler can stall a run longer than that.

    ``max_attempts`` must be an int >= 1; the delays finite numbers >= 0 and
    ``jitter`` within ``[0, 1]``: NaN or infinity would switch a budget off.
    A wrong type is a ``TypeError``, a wrong value a ``ValueError``.
    """

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        positive_int("RetryPolicy.max_attempts", self.max_attempts)
        non_negative_float("RetryPolicy.base_delay", self.base_delay)
        non_negative_float("RetryPolicy.max_delay", self.max_delay)
        if non_negative_float("RetryPolicy.jitter", self.jitter) > 1:
            msg = f"RetryPolicy.jitter must be within [0, 1], got {self.jitter!r}"
            raise ValueError(msg)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after attempt ``attempt`` (an int from 1) failed.

        Exact for every attempt, however late: the doubling stops where it reaches
        ``max_delay``, so ``2 ** (attempt - 1)`` is never computed where it would overflow.
        """
        doublings = positive_int("attempt", attempt) - 1
        if not self.base_delay:
            return 0.0
        # base_delay = m * 2**low and max_delay < 2**high (0.5 <= m < 1), so past
        # high - low doublings the wait is at least max_delay: capped, not computed.
        _, low = math.frexp(self.base_delay)
        _, high = math.frexp(self.max_delay)
        if doublings > high - low:
            base = float(self.max_delay)
        else:
            base = float(min(self.max_delay, math.ldexp(self.base_delay, doublings)))
        if not self.jitter:
            return base
        spread = (rng or random).uniform(-self.jitter, self.jitter)
        return max(0.0, base * (1.0 + spread))
