"""The instructor's audit: mutmut over the reference (``mutmut_run``) and the power of the
sampled tests (``power``); ``harness.commands.audit`` is the command."""
