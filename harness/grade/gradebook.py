"""The gradebook of ``ol grade``: one row per submission, kept on disk after every graded one.

``gradebook.json`` is the record; ``gradebook.csv`` is a view of it for spreadsheets. Both are
rewritten whole through ``write_atomic`` after each graded submission (JSON first), so a run
killed at any moment leaves two complete files, at worst the CSV one row behind the JSON; a
restart reads only the JSON and rewrites the CSV. A row is keyed by the submission's name and
the digest of its staged ``python/`` tree (``harness.sandbox.staging``: its ``.py`` files), or of
the refusal when staging refused the tree; together with the *context* (module, ``--ref-deps``,
limits, the catalog's own source and the harness version) it says whether the row is still
valid. A valid row is never graded again; a stale one is replaced, so a submission has one row
at most. A row whose submission is no longer in the folder is kept as history, marked
``present: false`` by every run that does not find it, and left out of the scores (``scores.csv``,
the counts, the flags); it is present again when the submission comes back.
A gradebook is graded on the cases of one seed (``harness.engine.seeding``), recorded in it (``seed``,
in the JSON and in a column of the CSV, and part of the context): a run that continues a
gradebook continues on its seed, so a gradebook never mixes seeds. One written before seeds were
recorded was graded on the public cases.
Every string is made valid text before it is written (``harness.escape.valid_data``), so no
message or folder name a submission brings can stop the writers.
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import __version__
from harness.check.stubs import stub_source
from harness.engine.course import Module
from harness.engine.results import Verdict, points_value
from harness.engine.seeding import cases_words, is_run_seed
from harness.engine.serial import reading, rerun_command, tagged, untag
from harness.engine.workspace import imports_of
from harness.errors import HarnessError
from harness.escape import printable, valid_data, valid_text
from harness.grade.integrity import flags_of, groups, identity
from harness.grade.row import GradeRow
from harness.paths import MUTANTS_DIR, PACKAGE_DIR, REFERENCE_DIR, REFERENCE_PYTHON, REPO_ROOT

JSON_NAME, CSV_NAME = "gradebook.json", "gradebook.csv"
KIND = "ol-gradebook"
# Gradebook's. The tag and "out" were added without a change to the rest ("kind" stays for the
# readers of version 1; ``read_gradebook`` continues an untagged one too).
FORMAT_VERSION = 1
# A row's verdicts (internal: the harness failed; graded again)
VERDICTS = (Verdict.PASS, Verdict.FAIL, Verdict.ERROR, Verdict.INTERNAL)
FIXED_COLUMNS = ("submission", "verdict", "passed", "failed", "score", "max_score", "time_s",
                 "message", "content_hash", "graded_at", "seed", "pitfalls", "flags", "shape",
                 "present")
SCORES_NAME = "scores.csv"
SCORES_COLUMNS = ("submission", "score", "max_score", "verdict")


# -- the key of a refused submission -----------------------------------------------------------------

def refusal_digest(message: str) -> str:
    """The key of a row whose tree staging refused: the same refusal, the same key."""
    return "refused-" + hashlib.sha256(valid_text(message).encode("utf-8")).hexdigest()[:48]


def context_of(module: Module, settings: dict[str, Any]) -> str:
    """A fingerprint of everything besides the submission that decides its grade: the module and
    the settings, ol's version, the course data, the catalog and every module of ol it imports
    (inside functions too), the contracts, the reference and the mutant library (the diagnosis
    in each row reads it). A gradebook graded under another fingerprint is graded again."""
    h = hashlib.sha256(json.dumps({"module": module.id, "settings": settings,
                                   "version": __version__}, sort_keys=True).encode())
    for path in context_files(module):
        h.update(path.relative_to(REPO_ROOT).as_posix().encode() + b"\0" + path.read_bytes()
                 + b"\0")
    return h.hexdigest()[:16]


def context_files(module: Module) -> list[Path]:
    """The files a grade of ``module`` depends on besides the submission (``context_of``)."""
    catalog = PACKAGE_DIR / "catalogs" / module.catalog / "test_catalog.py"
    check = PACKAGE_DIR / "check" / "engine.py"  # the runner, the worker, the diagnosis: a verdict
    files = set(_harness_imports(catalog, check)) | {PACKAGE_DIR / "course.toml"}
    for root in (REFERENCE_DIR / "contracts", REFERENCE_DIR / "python", MUTANTS_DIR / module.id):
        files.update(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(files)


def _harness_imports(*starts: Path) -> list[Path]:
    """``starts`` and every file of ol's package they import, directly or not (``import`` and
    ``from ... import`` anywhere in a module, inside functions too). One walk for all of them:
    each file is parsed once."""
    seen: set[Path] = set()
    todo = list(starts)
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file():
            continue
        seen.add(path)
        package = ".".join(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts[:-1])
        for _, module, names in imports_of(ast.parse(path.read_bytes(), str(path)), package):
            for name in (module, *(f"{module}.{n}" for n in names)):
                if name == "harness" or name.startswith("harness."):
                    todo += _module_files(name)
    return sorted(seen)


def _module_files(name: str) -> list[Path]:
    """The file of module ``harness.x.y`` and its packages' ``__init__.py`` (a name that is
    not a module, such as a function, has none)."""
    parts = name.split(".")[1:]
    base = PACKAGE_DIR.joinpath(*parts)
    found = [base.with_suffix(".py"), base / "__init__.py"]
    found += [PACKAGE_DIR.joinpath(*parts[:i], "__init__.py") for i in range(len(parts))]
    return [f for f in found if f.is_file()]


# -- the book ------------------------------------------------------------------------------------

@dataclass
class Gradebook:
    """Rows by submission name; ``save`` writes both files atomically."""

    out: Path
    module: str
    submissions_dir: str
    settings: dict[str, Any]
    context: str
    tests: list[str]
    rows: dict[str, GradeRow] = field(default_factory=dict)
    points: dict[str, float] = field(default_factory=dict)  # per test; a test not named: 1
    reference: dict[str, str] | None = None  # the reference module file's identity (integrity)
    stub: dict[str, str] | None = None  # the stub's (``ol start``): never flagged
    skipped: list[dict[str, str]] = field(default_factory=list)  # entries that are no submission

    @property
    def max_score(self) -> float:
        """The points of the whole catalog: every row's ``max_score``."""
        return float(sum(self.points.get(t, 1.0) for t in self.tests))

    @property
    def seed(self) -> int | None:
        """The run seed of every row (None: the public cases); it is one of the settings."""
        return self.settings.get("seed")

    @property
    def replay(self) -> str:
        """``ol check MODULE --workspace SUBMISSIONS/NAME [--ref-deps] --seed N``: how one
        submission's check is replayed on the gradebook's cases (NAME is the submission)."""
        from harness.engine.seeding import replay_command

        where = f"{self.submissions_dir.rstrip('/')}/NAME"
        return replay_command("check", self.module, self.seed, "--workspace", where,
                              *(("--ref-deps",) if self.settings.get("ref_deps") else ()))

    @property
    def json_path(self) -> Path:
        return self.out / JSON_NAME

    @property
    def csv_path(self) -> Path:
        return self.out / CSV_NAME

    @property
    def absent(self) -> list[str]:
        """The rows graded earlier whose submission the last run did not find in the folder."""
        return sorted(name for name, row in self.rows.items() if not row.present)

    def mark_present(self, names: set[str] | frozenset[str]) -> None:
        """Mark every row present or not: ``names`` are the submissions in the folder now. A row
        of another is kept, as history, but left out of the scores and the counts."""
        self.rows = {name: row if row.present == (name in names) else
                     row.with_(present=name in names) for name, row in self.rows.items()}

    def is_current(self, name: str, digest: str) -> bool:
        """Whether ``name`` with content ``digest`` is graded under this context already."""
        row = self.rows.get(name)
        return (row is not None and row.content_hash == digest and row.context == self.context
                and row.verdict != Verdict.INTERNAL)

    def record(self, row: GradeRow) -> None:
        """Add or replace the row of one submission, then write both files. Its ``score`` is its
        run's (none for a row without one: an error, a refusal, 0) of the catalog's points."""
        row = row.with_(max_score=self.max_score, context=self.context,
                        graded_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                        seed=self.seed, present=True).cleaned()
        self.rows[row.submission] = row
        self.save()

    def flag(self) -> None:
        """Set every row's integrity ``flags`` (``harness.grade.integrity``): against the
        reference and against the other rows, so a row's flags follow the whole gradebook. Only
        the submissions in the folder are compared: a row no longer there has none, and flags
        none of them (a submission handed in under a wrong name is not its own copy)."""
        found = flags_of({n: r.identity for n, r in self.rows.items() if r.present},
                         self.reference, self.stub)
        self.rows = {name: row.with_(flags=tuple(found.get(name, [])))
                     for name, row in self.rows.items()}

    def to_json(self) -> dict[str, Any]:
        return tagged("Gradebook", FORMAT_VERSION, {
            "kind": KIND,
            "module": self.module,
            "out": str(self.out),
            "submissions_dir": self.submissions_dir,
            "settings": self.settings,
            "seed": self.seed,
            "cases": cases_words(self.seed),
            "replay": self.replay,
            "context": self.context,
            "tests": self.tests,
            # per verdict, of the submissions in the folder (``absent``: the others)
            "counts": {v: sum(r.verdict == v for r in self.rows.values() if r.present)
                       for v in VERDICTS},
            "points": {t: points_value(self.points.get(t, 1.0)) for t in self.tests},
            "max_score": points_value(self.max_score),
            "reference": self.reference,
            "stub": self.stub,
            "skipped": self.skipped,
            "absent": self.absent,
            "identical": groups({n: list(r.flags) for n, r in self.rows.items()}),
            # Rows whose worker lacked part of the sandbox (docs/isolation.md), and what it lacked.
            "partial_sandbox": {name: list(self.rows[name].partial_sandbox or ())
                                for name in sorted(self.rows) if self.rows[name].partial_sandbox},
            "submissions": [self.rows[name].to_json() for name in sorted(self.rows)],
        })

    @classmethod
    def from_json(cls, d: Any, source: str | None = None, out: Path | None = None) -> Gradebook:
        """The gradebook ``to_json`` wrote, in ``out`` (None: the folder it was written in).

        Its rows come back in the order of their names (the order ``to_json`` writes)."""
        rerun = rerun_command(d, "module", "ol grade {} SUBMISSIONS", "ol grade")
        untag(d, "Gradebook", (FORMAT_VERSION,), source, rerun)
        with reading("Gradebook", source, rerun):
            return cls(Path(d["out"]) if out is None else out, d["module"], d["submissions_dir"],
                       dict(d["settings"]), d["context"], list(d["tests"]),
                       {r["submission"]: GradeRow.from_json(r) for r in d["submissions"]},
                       points={str(k): float(v) for k, v in d.get("points", {}).items()},
                       reference=d.get("reference"), stub=d.get("stub"),
                       skipped=list(d.get("skipped", [])))

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow([*FIXED_COLUMNS, *self.tests])
        for name in sorted(self.rows):
            row = self.rows[name]
            max_score = "" if row.max_score is None else points_value(row.max_score)
            writer.writerow([_cell(row.submission), row.verdict, row.passed, row.failed,
                             points_value(row.score), max_score, f"{row.time_s:.2f}",
                             _cell(row.message), row.content_hash, row.graded_at or "",
                             _seed_cell(row.seed), pitfalls_cell(list(row.pitfalls)),
                             flags_cell(list(row.flags)), row.shape,
                             "yes" if row.present else "no",
                             *(row.tests.get(t, "") for t in self.tests)])
        return buf.getvalue()

    def to_scores_csv(self) -> str:
        """``scores.csv``: submission, score, max_score, verdict; one row per submission in the
        folder (not one graded earlier and gone since), for a spreadsheet or an LMS's grade
        import (no other column to map)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(SCORES_COLUMNS)
        for name in sorted(self.rows):
            row = self.rows[name]
            if not row.present:
                continue
            max_score = self.max_score if row.max_score is None else row.max_score
            writer.writerow([_cell(row.submission), points_value(row.score),
                             points_value(max_score), row.verdict])
        return buf.getvalue()

    def save(self) -> None:
        """Write ``gradebook.json``, then ``gradebook.csv`` and ``scores.csv`` (views of it)."""
        from harness.files import write_atomic

        self.flag()
        write_atomic(self.json_path, json.dumps(valid_data(self.to_json()), indent=1,
                                                ensure_ascii=False, allow_nan=False) + "\n")
        write_atomic(self.csv_path, valid_text(self.to_csv()))
        write_atomic(self.out / SCORES_NAME, valid_text(self.to_scores_csv()))


def pitfalls_cell(entries: Any) -> str:
    """The CSV's pitfalls column: the labels of a row's diagnosis, best first
    (``pitfall 1; ol pitfall 17``); empty for a pass or a diagnosis that names none."""
    labels: list[str] = []
    for entry in entries if isinstance(entries, list) else []:
        for label in (entry.get("label"), *entry.get("also_labels", ())) if isinstance(entry, dict) else ():
            if isinstance(label, str) and label and label not in labels:
                labels.append(label)
    return _cell("; ".join(labels))


def flags_cell(flags: Any) -> str:
    """The CSV's flags column: ``identical to reference (bytes); identical to kate (syntax
    tree)``; empty when the row has none."""
    words = [f"identical to {f.get('to')} ({f.get('how')})" for f in flags
             if isinstance(f, dict)] if isinstance(flags, list) else []
    return _cell("; ".join(words))


def _seed_cell(seed: Any) -> str:
    """The CSV's seed column: the run seed, or ``public`` (also for a row of a gradebook written
    before seeds were recorded: those were graded on the public cases)."""
    return "public" if seed is None else str(seed)


def _cell(text: str) -> str:
    """Text a spreadsheet shows as text: one line, no control or bidi character (shown as its
    escape: ``cat gradebook.csv`` must not clear the terminal) and no formula (OWASP's CSV
    injection rule)."""
    text = " ".join(printable(valid_text(str(text))).split())
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


@dataclass(frozen=True)
class SavedGradebook:
    """What a gradebook on disk holds that a run continues: its seed and its rows."""

    seed: int | None  # None: the public cases (and every gradebook written before seeds)
    rows: dict[str, GradeRow]


def open_gradebook(out: Path, module: Module, submissions_dir: Path, settings: dict[str, Any],
                   tests: list[str], record: SavedGradebook | None = None) -> Gradebook:
    """The gradebook in ``out``: the one on disk if any (it must be of this module), else new.

    ``record`` is what ``read_gradebook`` read already (None: read it here)."""
    book = Gradebook(out, module.id, str(submissions_dir), settings, context_of(module, settings),
                     tests, points={t: module.points_of(t) for t in tests},
                     reference=identity((REFERENCE_PYTHON / module.file).read_bytes()),
                     stub=identity(stub_source(module).encode("utf-8")))
    record = record if record is not None else read_gradebook(out, module)
    if record is not None:
        book.rows = dict(record.rows)
    return book


def read_gradebook(out: Path, module: Module) -> SavedGradebook | None:
    """The gradebook in ``out`` (None when there is none), checked: an ol gradebook of
    ``module`` whose seed is a run seed or absent; anything else is one line (exit 2)."""
    path = out / JSON_NAME
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if (not isinstance(data, dict) or data.get("kind") != KIND
                or not isinstance(data.get("submissions"), list)):
            raise ValueError("not an ol gradebook")
        rows = {r["submission"]: GradeRow.from_json(r) for r in data["submissions"]
                if isinstance(r, dict) and r.get("verdict") in VERDICTS}
        seed = data.get("seed")  # absent: written before seeds were recorded, on the public cases
        if seed is not None and not is_run_seed(seed):
            raise ValueError(f"its seed {seed!r} is not a run seed")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"{path} is not a gradebook ol can continue: {exc}",
                           "move it away, or give another --out") from None
    if data.get("module") != module.id:
        raise HarnessError(f"{path} is the gradebook of {data.get('module')}, not {module.id}",
                           "give another --out for this module")
    return SavedGradebook(seed, rows)
