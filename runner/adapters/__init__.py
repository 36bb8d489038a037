"""hookline callbacks guarding other frameworks' agents, one submodule per framework.

Importing ``runner`` never imports a framework: each adapter is a submodule of its own,
importable only with its extra installed (``runner.adapters.pydantic_ai`` needs
``pip install 'hookline[pydantic-ai]'``, ``runner.adapters.langchain`` needs
``pip install 'hookline[langchain]'``).
"""
