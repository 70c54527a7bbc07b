"""Hostile: kill the process that started this one (the harness's fork server)."""

import os
import signal


def test_kill_the_parent():
    os.kill(os.getppid(), signal.SIGKILL)
