"""A callback module whose ``before_model`` returns ``None``.

Correct on its own; wrong as a ``BeforeModel`` (see ``bad_module_checked.py``).
"""

from hooks import ModelContext


def before_model(ctx: ModelContext) -> None:
    return None
