"""Telemetry: OpenTelemetry spans after the GenAI semantic conventions (extra hookline[otel])."""
