"""The M06.3 catalog: the PCG32 generator and its float64 uniforms."""
