"""Runnable programs, one idea each: ``python -m examples.NAME`` from the project root.

- ``quickstart``: a scripted assistant with a guard, a redaction hook, a retry handler
  and an audit observer, printed as a trace (what ``make demo`` runs);
- ``error_handlers``: retry and fallback handlers written as a module;
- ``typed_callbacks``: one class implementing four protocols, and a module checked by mypy;
- ``custom_point``: a retrieval step with hook points of its own.
"""
