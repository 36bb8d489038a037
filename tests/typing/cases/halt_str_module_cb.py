"""A callback module whose ``before_model`` halts with ``str``, not ``ModelResponse``.

Correct on its own; wrong as a ``BeforeModel`` (see ``bad_module_checked.py``).
"""

from hooks import Cont, Halt, ModelContext


def before_model(ctx: ModelContext) -> Cont[ModelContext] | Halt[str]:
    return Halt("blocked")
