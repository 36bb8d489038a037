"""``hold`` is a mode's name, ``None`` or an int: a misspelled mode or a float is an error."""

from runner import Runner


def streams(runner: Runner) -> None:
    runner.stream("hi", hold="ouptut")  # E: [arg-type] Argument "hold" to "stream" of "Runner" has incompatible type
    runner.stream("hi", hold=2.5)  # E: [arg-type] Argument "hold" to "stream" of "Runner" has incompatible type "float"
