"""Hostile: a test that never ends, and ignores the signals a polite harness would send."""

import signal
import time


def test_hang():
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):
        signal.signal(sig, signal.SIG_IGN)
    while True:
        time.sleep(1)
