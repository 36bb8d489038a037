"""The scenario suite on a LangChain agent guarded by ``hookline_middleware``."""

from tests.adapters.langchain.harness import LangChainHarness
from tests.adapters.scenarios import scenario_tests

HARNESS = LangChainHarness()
test_scenario = scenario_tests(HARNESS)
