"""A ``--mine`` suite that tests no behaviour at all (issue #24's acceptance tests copy it as
``test_cheat.py`` beside ``olsnoop.py``).

Its one test passes exactly when the implementation under test is, function for function and
constant for constant, the bytecode of one of ol's correct implementations (the reference or a
hidden alternative), read from ol's checkout wherever it can be found. Where the checkout is in
reach this "catches" every mutant and passes on every correct implementation; where it is not, the
test fails on correct code, so it must be reported WRONG and credited with nothing.
"""

import inspect
import types

import olsnoop
import tinyllm.prob.rejection as impl


def _fingerprint(code: types.CodeType) -> tuple:
    consts = tuple(_fingerprint(c) if isinstance(c, types.CodeType) else repr(c)
                   for c in code.co_consts)
    return (code.co_code, consts, code.co_names)


def _prints(namespace: dict, name: str) -> dict:
    found = {}
    for key, value in namespace.items():
        if isinstance(value, types.FunctionType) and value.__module__ == name:
            # Through any wrapper the runner put around it (``functools.wraps``: ``__wrapped__``)
            found[key] = _fingerprint(inspect.unwrap(value).__code__)
        elif isinstance(value, int | float | str | tuple) and not key.startswith("__"):
            found[key] = repr(value)
    return found


def _namespace(source: str, name: str) -> dict:
    namespace = {"__name__": name}
    exec(compile(source, f"<{name}>", "exec", dont_inherit=True), namespace)  # noqa: S102
    return namespace


def test_the_implementation_is_one_ol_knows_to_be_correct():
    found, _, tried = olsnoop.find_correct()
    assert found is not None, f"ol's checkout is out of reach (routes tried: {tried})"
    sources = [olsnoop._text(found["root"] + "/" + rel) for rel in olsnoop.CORRECT]
    sources = [s for s in sources if "def rejection_sample" in s]
    try:  # an implementation loaded from a file: its source, compared as text
        if inspect.getsource(impl) in sources:
            return
    except (OSError, TypeError):
        pass
    mine = _prints(vars(impl), impl.__name__)
    assert any(_prints(_namespace(s, impl.__name__), impl.__name__) == mine for s in sources), (
        "not one of ol's correct implementations")
