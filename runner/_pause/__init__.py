"""Pause and resume as data: pending requests, the pause signals, the run state, its JSON codec."""
