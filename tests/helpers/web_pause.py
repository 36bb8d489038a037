"""A process of its own that leaves a paused janitor run in a SQLite store and says its id.

``python -m tests.helpers.web_pause FILE``: runs ``examples.web_inbox``'s janitor on the
store in ``FILE`` until it pauses on its two deletions, prints the run id, exits.
"""

from __future__ import annotations

import sys

from examples.web_inbox import pause_one
from runner import SQLiteSessionStore


def main(path: str) -> None:
    """Pause one run in the store at ``path`` and print its id."""
    with SQLiteSessionStore(path) as store:
        print(pause_one(store).run_id, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
