"""The one progress protocol (``harness.engine.events``): hooks that do nothing unless
overridden, and a relay that hands each event to every listener in order."""

from __future__ import annotations

import pytest

from harness.engine.events import QUIET, Listener, Relay, Step


class Log(Listener):
    def __init__(self, name: str, log: list) -> None:
        self.name, self.log = name, log

    def started(self, start):
        self.log.append((self.name, "started", start))

    def step(self, step):
        self.log.append((self.name, "step", step.done))

    def line(self, text):
        self.log.append((self.name, "line", text))

    def warned(self, message):
        self.log.append((self.name, "warned", message))

    def finished(self):
        self.log.append((self.name, "finished"))


def test_every_hook_of_a_plain_listener_does_nothing():
    for listener in (Listener(), QUIET):
        assert listener.started(object()) is None
        assert listener.step(Step(1, 2, "x")) is None
        assert listener.line("a") is None and listener.warned("b") is None
        assert listener.finished() is None


def test_a_relay_hands_each_event_to_every_listener_in_order():
    log: list = []
    relay = Relay(Log("a", log), Listener(), Log("b", log))
    relay.started("go")
    relay.step(Step(1, 1, "t"))
    relay.line("l")
    relay.warned("w")
    relay.finished()
    assert log == [("a", "started", "go"), ("b", "started", "go"), ("a", "step", 1), ("b", "step", 1),
                   ("a", "line", "l"), ("b", "line", "l"), ("a", "warned", "w"), ("b", "warned", "w"),
                   ("a", "finished"), ("b", "finished")]


def test_a_listener_that_raises_stops_the_relay_there():
    log: list = []

    class Refuses(Listener):
        def started(self, start):
            raise RuntimeError("no")

    with pytest.raises(RuntimeError):
        Relay(Log("a", log), Refuses(), Log("b", log)).started("go")
    assert log == [("a", "started", "go")]
