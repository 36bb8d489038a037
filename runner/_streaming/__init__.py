"""Streaming: the channel a streamed run's events go through, the trampoline, the delta hook."""
