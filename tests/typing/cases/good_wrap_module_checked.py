"""A module that satisfies ``WrapModel`` can be assigned to a name of that type."""

import good_wrap_module_cb

import hooks

checked: hooks.WrapModel = good_wrap_module_cb
callbacks: list[object] = [good_wrap_module_cb]
