"""The seed of a run's randomised cases: the public cases, or fresh hidden ones.

Every catalog draws its randomised inputs (random distributions, seeded draws) from a seed per
family of cases, ``case_seed(public, family)``. Under the **public** cases (``seed is None``, what
``ol check`` runs by default and the lab always runs) that is the catalog's own fixed ``public``
seed: the inputs a student can read and reproduce. Under a **run seed** (``ol check --seed N``,
and ``ol grade`` / ``ol gate`` by default with a fresh one) each family's seed is derived from the
run seed and the family's name, so code that is right only on the public inputs fails, and the
report's run seed replays the verdict exactly.

The seed is set for the duration of one catalog run (``cases_from``); catalog code reads it only
through ``case_seed``. Tests that enumerate exactly stay exact whatever the seed; sampled tests keep
their named alpha (their false-alarm rate over seeds is measured by ``ol audit --power``).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import secrets
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

PUBLIC = "public"  # the word --seed takes for the public cases
MAX_SEED = 2**63 - 1
HINT = "e.g. --seed 1234, or --seed public for the public cases"


@dataclass(frozen=True)
class Seed:
    """The cases a request asks for: the public ones (``Seed()``), the hidden cases of run seed
    ``N`` (``Seed(N)``), or those of a fresh run seed drawn when the run starts (``FRESH``: what
    ``ol gate`` and ``ol grade`` run by default).

    A request takes a ``Seed``; an int (a run seed) or None (the public cases) is taken as one
    too (``Seed.of``). The run seed itself, once drawn, is an int or None (``drawn``)."""

    number: int | None = None  # the run seed; None: the public cases (or FRESH's, not drawn yet)
    fresh: bool = False

    def __post_init__(self) -> None:
        if self.fresh and self.number is not None:
            raise ValueError("a fresh seed has no number until it is drawn")
        if self.number is not None and not is_run_seed(self.number):
            raise _bad_seed(self.number)

    @classmethod
    def of(cls, given: object, fresh: bool) -> Seed:
        """``given`` as a request's seed: a ``Seed``, a run seed, None (the public cases), or
        ``FRESH`` (or the word ``"fresh"``) where ``fresh`` allows it; anything else is the
        one-line error ``--seed`` gives."""
        if isinstance(given, Seed) and (fresh or not given.fresh):
            return given
        if given is None:
            return PUBLIC_CASES
        if is_run_seed(given):
            return cls(given)  # type: ignore[arg-type]
        if fresh and given == FRESH_WORD:
            return FRESH
        raise _bad_seed(FRESH_WORD if given == FRESH else given)

    @property
    def public(self) -> bool:
        """Whether the run uses the public cases."""
        return self.number is None and not self.fresh

    def drawn(self) -> int | None:
        """The run seed: this one's number, a fresh one drawn now if it is ``FRESH``, None for
        the public cases."""
        return fresh_seed() if self.fresh else self.number

    def __str__(self) -> str:
        return FRESH_WORD if self.fresh else seed_text(self.number)


FRESH_WORD = "fresh"
PUBLIC_CASES = Seed()
FRESH = Seed(fresh=True)  # in a request: draw a fresh run seed when the run starts (gate, grade)

# The run seed in force: set for the duration of one catalog run (``cases_from``), read by the
# catalog through ``case_seed``; a context variable, so that a thread or task sees only its own.
_RUN_SEED: contextvars.ContextVar[int | None] = contextvars.ContextVar("ol_run_seed", default=None)


def fresh_seed() -> int:
    """A new run seed, hard to guess (grading and gating draw one per run and record it)."""
    return secrets.randbelow(2**32)


def is_run_seed(value: object) -> bool:
    """Whether ``value`` is a run seed: an int (not a bool) from 0 to ``MAX_SEED``."""
    return type(value) is int and 0 <= value <= MAX_SEED


def _bad_seed(value: object) -> Exception:
    from harness.errors import HarnessError

    return HarnessError(f"--seed must be 'public' or an integer from 0 to {MAX_SEED}, got {value!r}",
                        HINT)


def check_request_seed(seed: object, fresh: bool) -> None:
    """A request's seed: a ``Seed``, a run seed, None (the public cases), or ``FRESH`` where
    ``fresh`` allows it; anything else is the one-line error ``--seed`` gives."""
    Seed.of(seed, fresh)


def resolve_seed(seed: object) -> int | None:
    """The run seed of a request's seed: ``FRESH`` drawn now, else its number (None: public)."""
    return Seed.of(seed, fresh=True).drawn()


def parse_seed(text: str) -> int | None:
    """``--seed``'s value: ``public`` (None) or a non-negative integer; ValueError otherwise."""
    if text.strip().lower() == PUBLIC:
        return None
    try:
        value = int(text.strip(), 10)
    except ValueError:
        raise ValueError(f"--seed takes 'public' or a non-negative integer, got {text!r}") from None
    if not is_run_seed(value):
        raise ValueError(f"--seed must be between 0 and {MAX_SEED}, got {value}")
    return value


def cases_words(seed: int | None) -> str:
    """One phrase for reports: which cases a run used."""
    return "the public cases" if seed is None else f"hidden cases of seed {seed}"


def current() -> int | None:
    """The run seed in force (None: the public cases)."""
    return _RUN_SEED.get()


@contextlib.contextmanager
def cases_from(seed: int | None) -> Iterator[None]:
    """Run the enclosed catalog code on the cases of ``seed`` (None: the public cases)."""
    if seed is not None and not is_run_seed(seed):
        raise ValueError(f"a run seed is a non-negative integer, got {seed!r}")
    token = _RUN_SEED.set(seed)
    try:
        yield
    finally:
        _RUN_SEED.reset(token)


def case_seed(public: int, family: str) -> int:
    """The seed of one family of randomised cases: ``public`` under the public cases, else a
    64-bit seed derived from the run seed and ``family`` (distinct families, independent cases)."""
    run = _RUN_SEED.get()
    if run is None:
        return public
    digest = hashlib.sha256(f"ol-cases:{run}:{family}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


def seed_text(seed: int | None) -> str:
    """A run seed as ``--seed`` takes it: the number, or ``public`` for the public cases."""
    return "public" if seed is None else str(seed)


def replay_command(command: str, subject: str, seed: int | None, *options: str) -> str:
    """``ol COMMAND SUBJECT [OPTIONS] --seed N``: the command line that runs the same cases."""
    return shlex.join(["ol", command, subject, *options, "--seed", seed_text(seed)])


def check_replay(module: str, target: str, workspace: str | None, seed: int | None,
                 ref_deps: bool = False, pattern: str | None = None) -> str:
    """The ``ol check`` that runs a check again: the same cases against the same code.

    It holds every option that changes the cases or the code checked: the target (``--workspace
    WS``, with ``--ref-deps`` when the reference stood in for the modules it needs, or ``--target
    T`` for the reference or a mutant: ``target`` is a run's ``"reference"``, ``"mutant s07"`` or
    ``"workspace ..."``), the selection (``-k``) and the seed (``--seed N``, or ``--seed public``).
    Not the options that only stop a run early (``--maxfail``: the replay runs every selected
    test), bound its resources (``--timeout``, ``--memory-mb``, ``--disk-mb``: the defaults), or
    shape its output (``-v``, ``--wide``, ``--no-diagnosis``, the reports)."""
    if target == "reference":
        where: tuple[str, ...] = ("--target", "reference")
    elif target.startswith("mutant "):
        where = ("--target", target.split(" ", 1)[1])
    else:
        where = ("--workspace", workspace or ".", *(("--ref-deps",) if ref_deps else ()))
    return replay_command("check", module, seed, *where, *(("-k", pattern) if pattern else ()))
