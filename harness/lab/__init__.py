"""The mutation lab: every hand-written mutant against the catalog, the kill matrix."""
