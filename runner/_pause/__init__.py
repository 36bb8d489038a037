"""Pause and resume: pending requests, the run state and its JSON codec, the checks of a resume."""
