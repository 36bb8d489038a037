"""Assigning a module to a protocol-typed name checks its function's return type."""

import halt_str_module_cb
import none_module_cb

import hooks

halt_str: hooks.BeforeModel = halt_str_module_cb  # E: [assignment] Incompatible types in assignment (expression has type Module, variable has type "BeforeModel")  # N: Following member(s) of Module "halt_str_module_cb" have conflicts  # N: def before_model(ctx: ModelContext) -> Cont[ModelContext] | Halt[str]
returns_none: hooks.BeforeModel = none_module_cb  # E: [assignment] Incompatible types in assignment (expression has type Module, variable has type "BeforeModel")  # N: Following member(s) of Module "none_module_cb" have conflicts  # N: def before_model(ctx: ModelContext) -> None
