"""Tools: function tools, their schemas and argument checks."""
