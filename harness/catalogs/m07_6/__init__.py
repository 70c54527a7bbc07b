"""The M07.6 catalog: rejection sampling and residual distributions."""
