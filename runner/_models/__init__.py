"""Models: the protocols, ScriptedModel, ready-made error handlers, transient errors.

Providers live in folders inside: ``openai/``, ``anthropic/``.
"""
