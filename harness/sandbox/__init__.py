"""The one door to untrusted code.

Everything that starts, talks to, limits and cleans up a process running code under test lives
here: the framing of messages (``protocol``), the supervisor of a process tree (``supervisor``,
with ``proctree`` below it), the isolated worker itself (``worker``, run as a script), and the file
system operations that touch a submission's trees (``fs``: no recursion, no link followed), and
the wire format (``codec``, ``frames``, ``invoke``). It imports nothing of the engine: the target
the runner calls through it, ``IsolatedTarget``, is in ``harness.engine.isolated``.
"""
