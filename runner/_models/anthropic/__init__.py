"""Anthropic's Messages API, through the official SDK (extra hookline[anthropic])."""
