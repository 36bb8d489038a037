"""What the tests share that is no fixture: run helpers, a local OpenAI server, workers.

Fixtures are in the conftest.py files; these modules are imported by name.
"""

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
"""The project's root: the working directory of the processes the tests start."""
