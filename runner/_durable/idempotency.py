"""``idempotency_key()``: what a tool in a durable run passes on to make its effect happen once.

A durable run executes each tool call at least once: a step that was under way when
the process died runs again on recovery, since nothing recorded that it finished. A
tool with an effect outside the run (a payment, an email, a booking) hands the key
to the service it calls (an ``Idempotency-Key`` header, a unique column), which then
does the work once however often it is asked. Plain tools need nothing: the key is
read where it is needed, never passed as an argument.
"""

from __future__ import annotations

from runner._run.engine import KEY

__all__ = ["KEY", "idempotency_key"]


def idempotency_key() -> str:
    """The idempotency key of the tool call under way in a durable run.

    ``"{run_id}:{step}:{call_id}"``: the run, the run's step that executes this
    attempt and the model's call id. A step re-executed on recovery has the same key;
    another attempt (a retry an error hook asked for) is another step, so another key.
    Raises ``LookupError`` outside a tool call of a durable run, where calls are not
    repeated and no key exists.
    """
    try:
        return KEY.get()
    except LookupError:
        msg = (
            "idempotency_key() is only known inside a tool call of a durable run "
            "(runner.DurableRunner); plain runs never repeat a call"
        )
        raise LookupError(msg) from None
