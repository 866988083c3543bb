"""Pydantic models of every record, and the pure fold of events into state. No I/O."""
