"""How one dispatch runs (``DispatchPolicy``) and what it tells its caller (``Trace``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, final

from hooks._errors import describe
from hooks._slots import slot_init

__all__ = ["DEFAULT_POLICY", "DispatchPolicy", "Trace"]


@slot_init
@dataclass(frozen=True, slots=True)
class DispatchPolicy:
    """How a chain treats ``Halt`` and raising callbacks.

    ``continue_on_halt``: every callback runs and the **last** ``Halt`` wins.
    ``continue_on_error``: the chain goes on past a raising callback (with the context
    or outcome it had) and the **first** exception is raised when it ends, beating any
    ``Halt``. An illegal result counts as a raised ``InvalidResult``.

    At wrap points nothing halts, so ``continue_on_halt`` changes nothing; under
    ``continue_on_error`` a wrap that raised is stepped over -- its place gives the
    outcome its ``call_next`` last gave back, or runs the rest of the chain if it never
    called it -- and the first exception is raised when the outermost wrap is done.

    ``DispatchPolicy()`` -- both flags ``False`` -- is always the one object
    ``DEFAULT_POLICY``, however it is made (built, copied, unpickled or
    ``dataclasses.replace``),
    so that dispatch tells the default apart by identity, at no cost per call.
    """

    continue_on_halt: bool = False
    continue_on_error: bool = False

    def __new__(
        cls, continue_on_halt: bool = False, continue_on_error: bool = False
    ) -> DispatchPolicy:
        """``DEFAULT_POLICY`` when both flags are ``False`` (the bool itself), else a new one."""
        if cls is DispatchPolicy and continue_on_halt is False and continue_on_error is False:
            return DEFAULT_POLICY  # __init__ then sets its fields again, to the same False
        return object.__new__(cls)

    def __reduce__(self) -> tuple[type[DispatchPolicy], tuple[bool, bool]]:
        """Copies and pickles rebuild through the constructor, so the default stays one."""
        return (type(self), (self.continue_on_halt, self.continue_on_error))


# Made without __new__, which hands out this very object from here on.
DEFAULT_POLICY: Final = object.__new__(DispatchPolicy)
DispatchPolicy.__init__(DEFAULT_POLICY)


@final
class Trace:
    """Which callback decided a dispatch: pass ``trace=Trace()`` to ``run_*`` / ``arun_*``.

    Each dispatch given a trace first sets ``callback`` to ``None``, then to the
    deciding callback (the module or object, as listed):

    - before: the one whose ``Halt`` was returned (the last under ``continue_on_halt``),
      else the last whose ``Cont`` carried a different context than it was given;
    - after: the last whose result was a different outcome than it received;
    - error: the one that returned the ``Retry`` or ``Fallback``, else the last that
      returned a different ``Failure`` than it was given;
    - wrap: the outermost whose outcome was different from the one its last
      ``call_next`` gave back (it answered itself or replaced the outcome);
    - raised: the one that raised, or returned an illegal result (the first one under
      ``continue_on_error``); at a wrap point, the wrap the exception came from, not
      the wraps it passed out through.

    Different means neither the same object nor equal (``==``) to it: a callback that
    returns a new but equal context or outcome (``Cont(replace(ctx))`` that changed no
    field) replaced nothing. ``None`` means no callback changed anything. A dispatch
    without a trace runs the fast loops and records nothing; one with a trace takes the
    general path. One trace may be reused by dispatches that do not overlap.
    """

    __slots__ = ("callback",)

    def __init__(self) -> None:
        self.callback: object | None = None

    @property
    def description(self) -> str | None:
        """The deciding callback as messages and ``HookEvent.callback`` name it.

        ``"Guard instance"``, ``"module 'guards'"``, or ``None`` when no callback decided.
        """
        return None if self.callback is None else describe(self.callback)

    def __repr__(self) -> str:
        return f"Trace(callback={self.callback!r})"
