"""ol: a statistical test harness and mutation lab for the tinyllm course modules."""

__version__ = "0.1.0"
