"""The project's fixed paths: where ol's package, the reference, the mutants, the student's
default workspace and the reports live. A leaf module: it imports nothing of ol."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent  # harness/, which holds course.toml
REPO_ROOT = PACKAGE_DIR.parent
REFERENCE_DIR = REPO_ROOT / "reference"
REFERENCE_PYTHON = REFERENCE_DIR / "python"
MUTANTS_DIR = REPO_ROOT / "mutants"
STUDENT_DIR = REPO_ROOT / "student"
REPORTS_DIR = REPO_ROOT / "reports"
