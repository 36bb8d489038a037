"""An audit callback only observes: one whose ``on_event`` returns a ``Halt`` (or takes
something other than a ``HookEvent``) is not an audit callback."""

from hooks import Halt, HookEvent, audit


class Blocks:
    def on_event(self, event: HookEvent, /) -> Halt[str]:
        return Halt("no")


class Misread:
    def on_event(self, event: str, /) -> None:
        return None


audit(Blocks())  # E: [call-overload] No overload variant of "audit" matches argument type "Blocks"
audit(Misread())  # E: [call-overload] No overload variant of "audit" matches argument type "Misread"
