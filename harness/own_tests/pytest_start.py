"""pytest's start for ``ol tests --mine``: what of it depends on no implementation, made once.

The fork server (``harness.own_tests.server``) runs the student's suite once per implementation,
each run in a child it forks. Before this, each run made all of pytest's start on its own, about
0.1 s of a core before its first test (docs/performance.md). What depends on no implementation
and runs nothing of the suite is now made once, in the server, before the runs are forked:

- ``PytestStart``: ``pytest.main`` in two halves. The first (``__init__``) is
  ``_pytest.config.get_config``: the plugin manager, the ``Config``, every default plugin
  imported and registered (pluggy reads each plugin's hooks, each adds its options), and the
  recorder registered as ``pytest.main(plugins=...)`` would. The second (``main``), in each run
  on its own copy of the first, is the rest of ``pytest.main`` as pytest 8 and 9 write it: the
  selection plugin registered after the recorder (as ``plugins`` lists them), the command line
  parsed, the suite's configuration and ``conftest.py`` loaded, the session run, the same exit
  codes. Nothing of the first half reads the suite, opens a file or starts capturing: pytest's
  capture, its ``-c`` file and the student's ``conftest.py`` all come in the run, so no run
  shares a descriptor, a file or a module of the student's with another.
- ``PluginFixtures``: at each session's start pytest's fixture manager reads every plugin for
  fixtures (``FixtureManager.parsefactories``: every name of every plugin module, some 2000, a
  fifth of a run's start). The default plugins' modules are the same in every run, so which of
  their names can be a fixture is read once; in a run, a module whose namespace is still exactly
  what was read (every name bound to the same object) is handed to ``parsefactories`` as a
  stand-in module holding only those names, which it reads as it reads the module: the same
  fixtures, registered in the same order. A module changed since (a ``conftest.py`` may patch
  pytest) is read whole, as before.

Decided: pytest's private ``get_config``, ``Config._ensure_unconfigure`` and
``FixtureManager.parsefactories`` rather than ``pytest.main`` alone: they are what pytest 8 and
9 call. Without ``get_config`` the server does not start (the parent says so); without
``FixtureFunctionDefinition`` (pytest before 8.4) the plugins are read whole in each run. Not
made before the fork: the configuration's parsing (it loads the suite's ``conftest.py``, student
code, and starts capturing) and the session (a run's own). Both hold nothing secret: they exist
before the server has seen any implementation.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import os
import types
from typing import Any

import pytest


class PytestStart:
    """``pytest.main`` over ``args`` with ``recorder`` registered: made here, run in a child."""

    PROG = "pytest.main()"  # what pytest 9 calls the program, in its usage messages

    def __init__(self, args: list[str], recorder: Any, folder: str) -> None:
        """``folder``: where every run starts pytest (its invocation directory)."""
        import pluggy
        from _pytest.config import get_config

        self.args, self.recorder = list(args), recorder
        self.plugins: list[Any] = [recorder]  # the invocation's, as pytest.main keeps them
        prog = {"prog": self.PROG} if "prog" in inspect.signature(get_config).parameters else {}
        with contextlib.chdir(folder):
            self.config = get_config(self.args, self.plugins, **prog)
        self.config.pluginmanager.register(recorder)
        # The terminal's header names pluggy's version, which pluggy looks up in its installed
        # metadata on every read (importlib.metadata, about 5 ms a run): read once, kept.
        pluggy.__version__ = pluggy.__version__
        PluginFixtures(self.config.pluginmanager.get_plugins()).install()

    def main(self, select: Any = None) -> int:  # pragma: no cover - in a forked run
        """The rest of ``pytest.main`` (pytest's ``_main`` after ``get_config``), with the plugin
        ``select`` if given: its exit code. What pytest prints of a usage error goes to the
        run's stderr, which is /dev/null: only the code is kept."""
        import _pytest.config as pytest_config

        plugin_failure = getattr(pytest_config, "PluginImportFailure", None)  # pytest 9
        os.environ["PYTEST_VERSION"] = pytest.__version__
        manager = self.config.pluginmanager
        try:
            try:
                if select is not None:
                    self.plugins.append(select)
                    manager.register(select)
                config = manager.hook.pytest_cmdline_parse(pluginmanager=manager, args=self.args)
            except BaseException:
                self.config._ensure_unconfigure()
                raise
        except pytest_config.ConftestImportFailure:
            return int(pytest.ExitCode.USAGE_ERROR)
        except Exception as exc:
            if plugin_failure is not None and isinstance(exc, plugin_failure):
                return int(pytest.ExitCode.INTERNAL_ERROR)
            if isinstance(exc, pytest.UsageError):
                return int(pytest.ExitCode.USAGE_ERROR)
            raise
        try:
            try:
                return int(config.hook.pytest_cmdline_main(config=config))
            finally:
                config._ensure_unconfigure()
        except pytest.UsageError:
            return int(pytest.ExitCode.USAGE_ERROR)


class PluginFixtures:
    """The plugin modules' names that ``parsefactories`` acts on, read once (see the module's
    docstring): a fixture, or anything with a ``__wrapped__`` chain, which it follows to warn of
    a fixture hidden behind a decorator. Every other name it skips, whatever it is."""

    def __init__(self, plugins: Any) -> None:
        from _pytest import fixtures

        self.fixture_type = getattr(fixtures, "FixtureFunctionDefinition", None)
        self.modules: dict[int, tuple[types.ModuleType, dict[str, Any], types.ModuleType]] = {}
        if self.fixture_type is None:
            return
        for plugin in plugins:
            if type(plugin) is types.ModuleType and "__dir__" not in vars(plugin):
                seen = dict(vars(plugin))
                stand_in = types.ModuleType(plugin.__name__)
                vars(stand_in).update({name: value for name, value in seen.items()
                                       if self._acted_on(value)})
                self.modules[id(plugin)] = (plugin, seen, stand_in)

    def _acted_on(self, value: Any) -> bool:
        try:
            return type(value) is self.fixture_type or hasattr(value, "__wrapped__")
        except Exception:  # noqa: BLE001 - an object that raises on reading: read it in the run
            return True

    def stand_in(self, holder: Any) -> Any:  # pragma: no cover - in a forked run
        """The stand-in of ``holder`` if it is a module read here and unchanged since."""
        entry = self.modules.get(id(holder))
        if entry is None or entry[0] is not holder:
            return holder
        namespace, seen = vars(holder), entry[1]
        if len(namespace) != len(seen) or any(namespace.get(name, seen) is not value
                                              for name, value in seen.items()):
            return holder
        return entry[2]

    def install(self) -> None:
        """Have ``FixtureManager.parsefactories`` read a stand-in for an unchanged module."""
        if not self.modules:
            return
        from _pytest.fixtures import FixtureManager

        original = FixtureManager.parsefactories
        if getattr(original, "_ol_stand_ins", None) is not None:
            original = original._ol_stand_ins  # type: ignore[attr-defined] # once per process

        @functools.wraps(original)
        def parsefactories(manager: Any, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
            if "holder" in kwargs:  # pytest 9: parsefactories(holder=plugin, node=session)
                kwargs["holder"] = self.stand_in(kwargs["holder"])
            elif args:  # pytest 8: parsefactories(plugin, nodeid)
                args = (self.stand_in(args[0]), *args[1:])
            return original(manager, *args, **kwargs)

        parsefactories._ol_stand_ins = original  # type: ignore[attr-defined]
        FixtureManager.parsefactories = parsefactories  # type: ignore[method-assign,assignment]
