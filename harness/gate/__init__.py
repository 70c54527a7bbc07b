"""The milestone gate: every module of a milestone checked in dependency order."""
