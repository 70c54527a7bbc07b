"""The engine: the course model, catalog runner and targets, exact enumeration, uniforms and typed results."""
