"""Adapters: hookline callbacks guarding other frameworks' agents.

Each adapter is a public submodule with its own extra, imported by name
(``runner.adapters.langchain`` needs ``hookline[langchain]``,
``runner.adapters.pydantic_ai`` needs ``hookline[pydantic-ai]``); importing ``runner`` or
this package imports no framework.
"""
