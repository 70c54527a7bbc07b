"""Grading a class: many workspaces, a resumable gradebook, locally or on Dask."""
