"""Rung R1: a student's own pytest tests against the reference, hidden correct code and every known bug."""
