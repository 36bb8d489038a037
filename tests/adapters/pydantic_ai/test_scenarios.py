"""The scenario suite on pydantic-ai (``make test-pydantic-ai``: its own environment)."""

from tests.adapters.pydantic_ai.harness import PydanticAIHarness
from tests.adapters.scenarios import scenario_tests

HARNESS = PydanticAIHarness()
test_scenario = scenario_tests(HARNESS)
