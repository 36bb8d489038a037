"""Ready-made policies: callbacks like any other, built on the hooks' own vocabulary."""
