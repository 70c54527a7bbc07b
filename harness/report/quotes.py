"""What a report quotes beside its result: the course's words and the sources it shows.

A reporter only formats: it reads no file and loads no course. What it quotes that is not in
the result (a mutant's pitfall in the course's words, the reference file a Stryker report
shows, the catalog's test files, a blocked module's catalog) is gathered by its caller
(``harness.commands.quotes``) into one ``Quotes`` and handed over with the result.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Quotes:
    """``pitfalls``: the module's pitfalls by number, in the course's words; ``references``: the
    reference's files by their path under ``reference/python``, as text; ``test_files``: the
    catalog's test files as Stryker's ``testFiles``; ``catalogs``: a module's catalog, its test
    names in order (the gate's modules that did not run)."""

    pitfalls: Mapping[int, str] = field(default_factory=dict)
    references: Mapping[str, str] = field(default_factory=dict)
    test_files: Mapping[str, Any] = field(default_factory=dict)
    catalogs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


NO_QUOTES = Quotes()
