"""OpenAI's Chat Completions wire format, through the official SDK (extra hookline[openai])."""
