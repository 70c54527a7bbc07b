"""The errors ol foresees, and its exit codes (defined here once).

``cli.main`` turns each ``HarnessError`` into one line with a hint and its exit code.
"""

from __future__ import annotations

EXIT_PASS = 0  # the verdict is pass
EXIT_FAIL = 1  # the verdict is fail
EXIT_USAGE = 2  # a usage or setup error: one line says what is wrong and what to do
EXIT_INTERNAL = 3  # ol itself failed: one line names the log with the traceback
EXIT_PARTIAL = 4  # a partial run (-k, --maxfail) in which no test failed: no verdict, not a pass
EXIT_INTERRUPTED = 130  # Ctrl-C, as a shell reports a process ended by SIGINT (128 + 2)


def exit_code(verdict: str) -> int:
    """The exit code of a command whose verdict is ``verdict`` (``partial``: a run that left
    tests unrun and failed none has no verdict; 0 is a full pass only)."""
    return {"pass": EXIT_PASS, "partial": EXIT_PARTIAL}.get(verdict, EXIT_FAIL)


class HarnessError(Exception):
    """A usage or setup error: the message says what is wrong, the hint what to do."""

    exit_code = EXIT_USAGE

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def line(self) -> str:
        """The one line printed to the user."""
        return f"ol: {self.message}" + (f" ({self.hint})" if self.hint else "")


class HostError(HarnessError):
    """The machine failed, not the submission (no space left, no descriptors, no memory for ol's
    own staging): ``ol grade`` records the row ``internal`` and grades it again next run."""

    exit_code = EXIT_INTERNAL


# What the machine running ol, not a submission, is to blame for when ol's own file operations fail.
HOST_ERRNOS = frozenset({"EMFILE", "ENFILE", "ENOMEM", "ENOSPC", "EDQUOT", "EIO"})


def host_failure(exc: OSError) -> bool:
    """Whether ``exc`` is the machine's failure (``HOST_ERRNOS``), not the submission's."""
    import errno

    return errno.errorcode.get(exc.errno or 0, "") in HOST_ERRNOS


class MutantDoesNotApply(HarnessError):
    """A mutant's edit no longer matches the reference it was written against."""


class VerdictFailure(HarnessError):
    """A run that cannot produce a verdict (for example the reference fails its own catalog)."""

    exit_code = EXIT_FAIL
