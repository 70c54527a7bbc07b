"""Probability primitives: PCG32 uniforms (M06.3), categorical sampling (M07.1), rejection (M07.6)."""
