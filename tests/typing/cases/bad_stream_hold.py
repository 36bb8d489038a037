"""``hold`` is a mode's name, ``None`` or an int: a misspelled mode or a float is an error."""

from runner import Runner


def streams(runner: Runner) -> None:
    runner.stream("hi", hold="ouptut")  # E: [call-overload] No overload variant of "stream" of "Runner" matches argument types "str", "str"
    runner.stream("hi", hold=2.5)  # E: [call-overload] No overload variant of "stream" of "Runner" matches argument types "str", "float"
