"""Benchmarks: run one with ``python -m benchmarks.<name>`` (``--quick`` for a smoke run)."""
