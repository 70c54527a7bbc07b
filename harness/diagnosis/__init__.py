"""The diagnosis of a failing check: which known mistake the code under test behaves like.

``record`` keeps the calls of failing tests, ``outcome`` compares and words one call's answer,
``engine`` replays the calls on the reference and the mutant library and explains the difference.
See docs/diagnosis.md.
"""
