"""How many times an operation is tried, and how long to wait between tries."""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["RetryPolicy"]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """The runner's retry budget, per operation (one model call, one tool call).

    ``max_attempts`` counts every call of the operation, the first included, so
    ``max_attempts=1`` never retries. Wait ``n`` (after attempt ``n`` failed) is
    ``min(max_delay, base_delay * 2 ** (n - 1))`` scaled by a random factor in
    ``[1 - jitter, 1 + jitter]``; ``Retry(delay=...)`` replaces one wait, which is
    capped at ``max_delay`` too, so no handler can stall a run longer than that.
    """

    max_attempts: int = 3
    base_delay: float = 0.5
    max_delay: float = 30.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            msg = f"RetryPolicy.max_attempts must be >= 1, got {self.max_attempts!r}"
            raise ValueError(msg)
        if self.base_delay < 0 or self.max_delay < 0:
            msg = (
                "RetryPolicy delays must be >= 0, got "
                f"base_delay={self.base_delay!r}, max_delay={self.max_delay!r}"
            )
            raise ValueError(msg)
        if not 0 <= self.jitter <= 1:
            msg = f"RetryPolicy.jitter must be within [0, 1], got {self.jitter!r}"
            raise ValueError(msg)

    def delay(self, attempt: int, rng: random.Random | None = None) -> float:
        """Seconds to wait after attempt ``attempt`` (from 1) failed."""
        base = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        if not self.jitter:
            return base
        spread = (rng or random).uniform(-self.jitter, self.jitter)
        return max(0.0, base * (1.0 + spread))
