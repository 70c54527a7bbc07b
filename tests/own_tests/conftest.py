"""The suites under ``suites/`` are a student's tests, graded by ``ol tests --mine``; the project's
own pytest run must not collect them (the wrong and hostile ones fail, or worse, by design)."""

collect_ignore = ["suites"]
