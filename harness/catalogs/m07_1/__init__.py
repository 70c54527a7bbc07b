"""The M07.1 catalog: categorical sampling by the inverse CDF."""
