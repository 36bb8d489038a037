"""The scenario suite on hookline's own Runner: the reference every adapter is held to."""

from tests.adapters.reference.harness import RunnerHarness
from tests.adapters.scenarios import scenario_tests

HARNESS = RunnerHarness()
test_scenario = scenario_tests(HARNESS)
