"""The errors ol foresees. ``cli.main`` turns each into one line with a hint and exit code 2."""

from __future__ import annotations


class HarnessError(Exception):
    """A usage or setup error: the message says what is wrong, the hint what to do."""

    exit_code = 2

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def line(self) -> str:
        """The one line printed to the user."""
        return f"ol: {self.message}" + (f" ({self.hint})" if self.hint else "")


class MutantDoesNotApply(HarnessError):
    """A mutant's edit no longer matches the reference it was written against."""


class VerdictFailure(HarnessError):
    """A run that cannot produce a verdict (for example the reference fails its own catalog)."""

    exit_code = 1
