"""The JSON envelope every result carries: a type tag and a format version, checked on the way in.

``tagged`` puts ``"$type"`` (the class's name, as pytest's ``"$report_type"``) and
``"format_version"`` in front of a result's body; ``untag`` checks both before ``from_json`` reads
the body, and says in one line what the data is and what to do when it is not what this ol reads
(a report of another kind, of an older or a newer ol). ``read_result`` reads a result from a file,
so the message names the file.

A type's version changes when its body changes in a way a reader must know: a key its
``from_json`` needs, or a value an older reader would misread. Every type has its own version.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any, Protocol, TypeVar

from harness.errors import HarnessError

TYPE_KEY = "$type"
VERSION_KEY = "format_version"

# What each tag is, for a message about a document of the wrong type.
DESCRIPTIONS = {
    "RunResult": "a check result",
    "LabResult": "a lab result",
    "GateResult": "a gate result",
    "MineResult": "an own-tests result",
    "MutmutAudit": "a mutmut audit",
    "PowerAudit": "a power audit",
    "Gradebook": "a gradebook",
}


def tagged(type_name: str, version: int, body: dict[str, Any]) -> dict[str, Any]:
    """``{"$type": type_name, "format_version": version, **body}``."""
    return {TYPE_KEY: type_name, VERSION_KEY: version, **body}


def untag(data: Any, type_name: str, versions: Collection[int], source: str | None = None,
          rerun: str = "") -> int:
    """The format version of ``data``, checked to be a ``type_name`` this ol reads.

    ``source`` names where the data came from (a file); ``rerun`` is the command that writes it
    again, for the hint. A HarnessError of one line otherwise.
    """
    where = source_name(source)
    what = DESCRIPTIONS.get(type_name, f"a {type_name}")
    hint = _hint(rerun)
    if not isinstance(data, dict):
        raise HarnessError(f"{where} is not {what}: it is a JSON {_json_kind(data)}, not an object",
                           hint)
    tag = data.get(TYPE_KEY)
    if tag != type_name:
        if tag is None:
            raise HarnessError(f"{where} is not {what}: it has no \"{TYPE_KEY}\" (written by an "
                               f"older ol, or not by ol)", hint)
        other = DESCRIPTIONS.get(tag, f"a {printable_value(tag)}") if isinstance(tag, str) \
            else f"tagged {printable_value(tag)}"
        raise HarnessError(f"{where} is {other}, not {what}",
                           f"read it as {tag}" if tag in DESCRIPTIONS else hint)
    version = data.get(VERSION_KEY)
    reads = " or ".join(str(v) for v in sorted(versions))
    one = "version" if len(versions) == 1 else "versions"
    if VERSION_KEY not in data:
        raise HarnessError(f"{where} is {what} without a {VERSION_KEY}; this ol reads {one} "
                           f"{reads}", hint)
    if type(version) is not int or version not in versions:
        if type(version) is int and version > max(versions):
            hint = "a newer ol wrote it: use that ol, or " + hint
        raise HarnessError(f"{where} is {what} of format version {printable_value(version)}; "
                           f"this ol reads {one} {reads}", hint)
    return version


def rerun_command(data: Any, key: str, template: str, fallback: str) -> str:
    """The command that writes ``data`` again, for an error's hint: ``template`` with ``{}`` the
    value of ``data[key]`` (the module or milestone), or ``fallback`` when ``data`` has none."""
    value = data.get(key) if isinstance(data, dict) else None
    return template.format(value) if isinstance(value, str) else fallback


def source_name(source: str | None) -> str:
    return printable_value(source, quote=False, limit=1000) if source else "the data"


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    return "number" if isinstance(value, (int, float)) else type(value).__name__


def printable_value(value: Any, quote: bool = True, limit: int = 80) -> str:
    """``value`` for a one-line message: its control characters escaped, cut at ``limit``."""
    text = json.dumps(value, ensure_ascii=False, default=repr) if quote else str(value)
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


@contextlib.contextmanager
def reading(type_name: str, source: str | None = None, rerun: str = "") -> Iterator[None]:
    """Around a ``from_json`` body: a missing key or a value of the wrong type is one line too."""
    try:
        yield
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        what = DESCRIPTIONS.get(type_name, f"a {type_name}")
        detail = f"no key {exc}" if isinstance(exc, KeyError) else f"{type(exc).__name__}: {exc}"
        raise HarnessError(f"{source_name(source)} is {what} this ol cannot read "
                           f"({printable_value(detail, False)})", _hint(rerun)) from None


def _hint(rerun: str) -> str:
    if not rerun:
        return "write it again with this ol"
    return f"rerun `{printable_value(rerun, quote=False)}` to write it again"


class _FromJson(Protocol):
    @classmethod
    def from_json(cls, data: Any, source: str | None = None) -> Any: ...


R = TypeVar("R", bound=_FromJson)


def read_result(path: Path | str, cls: type[R]) -> R:
    """The result of type ``cls`` in the JSON file ``path``; every problem is one line naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}",
                           "give the path of a report ol wrote") from None
    except json.JSONDecodeError as exc:
        raise HarnessError(f"{path} is not JSON (line {exc.lineno}: {exc.msg})",
                           "give the path of a report ol wrote") from None
    return cls.from_json(data, source=str(path))


# -- values JSON has no room for -------------------------------------------------------------------

def float_from_json(value: Any) -> float:
    """A float as ``nonfinite_as_text`` writes it: ``"inf"``, ``"-inf"`` and ``"nan"`` too.

    NaN comes back as ``math.nan`` itself, so a rebuilt result equals one holding ``math.nan``.
    """
    if isinstance(value, str):
        number = float(value)
        return math.nan if math.isnan(number) else number
    return math.nan if isinstance(value, float) and math.isnan(value) else float(value)


def optional_float(value: Any) -> float | None:
    return None if value is None else float_from_json(value)


def nonfinite_as_text(value: Any) -> Any:
    """``value`` (plain data) with every float JSON has no room for written as a string
    (``"inf"``, ``"-inf"``, ``"nan"``), throughout its dicts, lists and tuples (a tuple comes back
    a list); ``restored`` and ``float_from_json`` read them back."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: nonfinite_as_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [nonfinite_as_text(v) for v in value]
    return value


def restored(value: Any) -> Any:
    """The inverse of ``nonfinite_as_text`` on free-form data: ``"inf"``, ``"-inf"`` and
    ``"nan"`` become floats again (lists stay lists: JSON has no tuples)."""
    if isinstance(value, str) and value in ("inf", "-inf", "nan"):
        return float_from_json(value)
    if isinstance(value, dict):
        return {k: restored(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restored(v) for v in value]
    return value
