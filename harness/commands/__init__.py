"""One thin module per ``ol`` command: arguments -> typed request -> engine -> reporter -> exit code.

``harness.cli`` parses the arguments and calls ``run(name, args)``; each module's ``run`` builds
the command's typed request (``harness.engine.requests``), calls the Python API
(``harness.api``) and hands the result to its reporters. A command module imports its engine
only when it runs, so ``ol --help`` and ``ol tests`` stay light.
"""

from __future__ import annotations

import argparse
import importlib

COMMANDS = ("tests", "start", "check", "diff", "lab", "audit", "gate", "grade")


def run(name: str, args: argparse.Namespace) -> int:
    """Run the command ``name`` on its parsed ``args``; the exit code."""
    if name not in COMMANDS:
        raise ValueError(f"no command {name!r}")
    module = importlib.import_module(f"harness.commands.{name}")
    return module.run(args)
