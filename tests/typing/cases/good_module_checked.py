"""A module that satisfies ``BeforeModel`` can be assigned to a name of that type."""

import good_module_cb

import hooks

checked: hooks.BeforeModel = good_module_cb
callbacks: list[object] = [good_module_cb]
