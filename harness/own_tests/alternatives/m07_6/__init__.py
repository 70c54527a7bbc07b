"""Hidden correct implementations of M07.6 (``tinyllm/prob/rejection.py``)."""

from harness.own_tests.alternatives import Alternative

ALTERNATIVES = (
    Alternative(
        "loops", "rejection_loops.py",
        "plain Python lists and loops, its own argument checks with other error messages, "
        "TypeError for an argument that is not a number (None, a string), "
        "sample_categorical reached through its module; Python bool, float and int results"),
    Alternative(
        "vectorized", "rejection_vectorized.py",
        "numpy wherever the contract allows it, numpy scalar results (numpy.bool_, "
        "numpy.float64, numpy.int64: equal to, but not identical with, True, 0.5 or 2), and "
        "errors raised as a subclass of ValueError with other messages"),
)
