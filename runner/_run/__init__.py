"""The loop, one way down: turns, a response's tool calls, the guarded operation, the engine."""
