"""Run records: tagged JSON (``tagged``) and the JSON-lines form of a run's events (``lines``)."""
