"""The catalogs: one package per course module, each plain pytest."""
