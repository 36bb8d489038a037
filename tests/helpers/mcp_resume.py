"""Resume, in a process of its own, a run paused on an MCP server's question.

``python -m tests.helpers.mcp_resume URL STATE_FILE REQUEST_ID ANSWER_JSON``: a runner
of the same agent (the notes server at ``URL``, the state signed with the test key)
answers the request with ``Respond(ANSWER)`` and prints the tool results, one a line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from runner import (
    Agent,
    MCPTools,
    Respond,
    Runner,
    RunState,
    ScriptedModel,
    ToolResultEvent,
)


def main(argv: list[str]) -> None:
    """Resume the saved state with the answer; print the tool results."""
    url, saved, request_id, answer = argv
    agent = Agent("ops", ScriptedModel(["done"]), tools=[MCPTools("notes", url=url)])
    state = RunState.from_json(Path(saved).read_text())
    with Runner(agent, state_keys=[b"k" * 32]) as runner:
        result = runner.resume(state, {request_id: Respond(json.loads(answer))})
    for event in result.events:
        if isinstance(event, ToolResultEvent):
            print(event.result.content)


if __name__ == "__main__":
    main(sys.argv[1:])
