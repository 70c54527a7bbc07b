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
  fixtures (``FixtureManager.parsefactories``: every name of every plugin module and of every
  plugin object's class, some 3000, a fifth of a run's start). pytest's own plugins are the same
  in every run, so which of their names it acts on is read once; in a run, a plugin whose names
  are still the same for it is handed to ``parsefactories`` as a stand-in holding only those
  names, which it reads as it reads the plugin: the same fixtures, registered in the same order.
  A plugin changed since in a way that matters (a ``conftest.py`` may patch pytest), or one not
  read here (a ``conftest.py``, a plugin it registers), is read whole, as before.

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
        PluginFixtures(self.config.pluginmanager.get_plugins())  # installs itself in pytest

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


_GONE = object()  # a name no longer bound


class PluginFixtures:
    """What of the plugins ``parsefactories`` acts on, read once (see the module's docstring).

    It acts on a name bound to a fixture, or to something whose ``__wrapped__`` chain leads to
    one (it warns of a fixture hidden behind a decorator), and skips every other name. It reads a
    module's names in the module, and an object's in its class (and the classes that class
    derives from; its metaclass's answer ``getattr`` on the class). So a module is read as a
    stand-in module holding only the names it acts on, and a plugin object whose class holds
    none as a module of no names; both only while no name it acts on was bound, rebound or unbound in
    the namespaces read (pytest's ``legacypath`` sets properties on some classes at configure,
    which it skips, so they change nothing). Anything else, or never read here, is read whole.
    The objects the names are bound to are taken to be unchanged: a ``conftest.py`` giving one of
    pytest's own functions a ``__wrapped__`` fixture would go unseen.
    """

    def __init__(self, plugins: Any) -> None:
        from _pytest import fixtures

        self.fixture_type = getattr(fixtures, "FixtureFunctionDefinition", None)
        # What is read for a plugin object whose class can hold no fixture: a module of no names.
        self.nothing = types.ModuleType("no fixtures")
        # id -> (the module or class, the namespaces read and what they held, its stand-in)
        self.read: dict[int, tuple[Any, list[tuple[Any, dict[str, Any]]], Any]] = {}
        if self.fixture_type is None:
            return
        self._install(fixtures.FixtureManager)  # first: its own namespace is read as it will be
        classes = [type(p) for p in plugins if not isinstance(p, (type, types.ModuleType))]
        for plugin in plugins:
            if type(plugin) is types.ModuleType and "__dir__" not in vars(plugin):
                seen = dict(vars(plugin))
                stand_in = types.ModuleType(plugin.__name__)
                vars(stand_in).update({name: value for name, value in seen.items()
                                       if self._acted_on(value)})
                self.read[id(plugin)] = (plugin, [(plugin, seen)], stand_in)
                classes += [value for value in seen.values() if isinstance(value, type)
                            and value.__module__ == plugin.__name__]
        for cls in classes:
            owners = [c for c in (*cls.__mro__, *type(cls).__mro__) if c.__module__ != "builtins"]
            seen_all = [(c, dict(vars(c))) for c in owners]
            if not any(self._acted_on(v) for _, seen in seen_all for v in seen.values()):
                self.read[id(cls)] = (cls, seen_all, self.nothing)

    def _acted_on(self, value: Any) -> bool:
        """Whether ``parsefactories`` does anything with a name bound to ``value``."""
        if type(value) is self.fixture_type:
            return True
        try:
            inner = inspect.unwrap(value, stop=lambda o: type(o) is self.fixture_type)
        except Exception:  # noqa: BLE001 - a loop, or an object that raises on reading: read it
            return True
        return type(inner) is self.fixture_type

    def _same_for_it(self, namespace: Any, seen: dict[str, Any]) -> bool:
        """Whether no name ``parsefactories`` acts on was bound, rebound or unbound since."""
        for name, value in seen.items():
            now = namespace.get(name, _GONE)
            if now is not value and (self._acted_on(value) or self._acted_on(now)):
                return False
        return not any(self._acted_on(namespace[name]) for name in namespace.keys() - seen.keys())

    def stand_in(self, holder: Any) -> Any:  # pragma: no cover - in a forked run
        """What ``parsefactories`` reads for ``holder``: its stand-in if what was read of it (its
        module, or its class) is the same for it, else ``holder``."""
        key = holder if isinstance(holder, types.ModuleType) else type(holder)
        entry = self.read.get(id(key))
        if entry is None or entry[0] is not key or isinstance(holder, type):
            return holder
        if all(self._same_for_it(vars(owner), seen) for owner, seen in entry[1]):
            return entry[2]
        return holder

    def _install(self, manager_class: Any) -> None:
        """Have ``FixtureManager.parsefactories`` read the stand-ins."""
        from _pytest.nodes import Node

        original = manager_class.parsefactories
        if getattr(original, "_ol_stand_ins", None) is not None:
            original = original._ol_stand_ins  # once per process

        @functools.wraps(original)
        def parsefactories(manager: Any, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
            # A plugin: parsefactories(holder=plugin, node=session) in pytest 9,
            # parsefactories(plugin, nodeid) in pytest 8; never a collection node's own.
            if "holder" in kwargs:
                kwargs["holder"] = self.stand_in(kwargs["holder"])
            elif len(args) == 2 and not isinstance(args[0], Node):
                args = (self.stand_in(args[0]), args[1])
            return original(manager, *args, **kwargs)

        parsefactories._ol_stand_ins = original  # type: ignore[attr-defined]
        manager_class.parsefactories = parsefactories
