"""The context of the output points: the typed final answer an agent gives.

``on_output_error`` sees an answer that did not validate against the agent's
``output_type``; ``after_output`` the validated value (or the failure the answer came to).
"""

from __future__ import annotations

from dataclasses import dataclass

from hooks._messages import ModelResponse
from hooks._slots import slot_init
from hooks._state import Invocation

__all__ = ["OutputContext"]


@slot_init
@dataclass(frozen=True, slots=True)
class OutputContext:
    """A final answer checked against the agent's ``output_type``.

    ``response`` is the model's answer the value was read from (its text, or its call
    of the final-result tool); ``attempt`` counts the answers checked in this turn from
    1, and ``max_attempts`` is the budget (the runner's ``RetryPolicy.max_attempts``).
    ``feedback`` is what a ``Retry(ctx)`` from ``on_output_error`` tells the model: the
    validation errors unless a hook gives its own (``Retry(replace(ctx, feedback=...))``).
    """

    invocation: Invocation
    response: ModelResponse
    attempt: int = 1
    max_attempts: int = 1
    feedback: str = ""
