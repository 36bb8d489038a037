"""Durable runs on DBOS (extra hookline[dbos]): workflows and steps behind the engine seam."""
