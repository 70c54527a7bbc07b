"""What ol shows on a terminal as a run goes: listeners of ``harness.engine.events``.

The engines tell one ``Listener`` what happens; here it becomes lines and a bar on stderr
(``progress.py``: a ``rich`` bar on a terminal, plain lines elsewhere), a gate's module lines
(``gate.py``), a grading run's submission lines (``grade.py``) and the audits' timed lines
(``lines.py``). ``harness.report`` only formats; this package only prints.
"""
