"""A dataclass's JSON derived from its fields, so that no field is written twice.

``to_fields(obj)`` is the JSON object of a dataclass instance: one key per field, in the order of
the fields, each value made plain (an enum its value, a tuple a list, a nested result its own
``to_json``). ``from_fields(cls, data)`` is its inverse: every key checked against the field's
annotation (``int`` is an integer and never a boolean, ``float`` takes an integer too, ``X | None``,
``tuple[X, ...]``, ``list[X]``, ``dict[str, X]``, enums, nested dataclasses), a missing key takes
the field's default, and anything else is a ``FieldError`` of one line naming the class and the
field. Where a field's JSON is not its plain value, the class passes a converter for it (``write``
and ``read``, by field name). A leaf: any layer may use it.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import types
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, Union, get_args, get_origin, get_type_hints

__all__ = ["FieldError", "from_fields", "plain", "to_fields"]

T = TypeVar("T")
Convert = Mapping[str, Callable[[Any], Any]]


class FieldError(ValueError):
    """Data that is not the JSON of a class: one line naming the class, the field and the value."""


def plain(value: Any) -> Any:
    """``value`` as JSON holds it: an enum's value, a list for a tuple, a result's ``to_json``."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if hasattr(value, "to_json"):
        return value.to_json()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_fields(value)
    return value


def to_fields(obj: Any, write: Convert | None = None) -> dict[str, Any]:
    """The JSON object of the dataclass instance ``obj``: every field, in order, made plain
    (``write`` maps a field's name to its own converter)."""
    write = write or {}
    return {f.name: write[f.name](getattr(obj, f.name)) if f.name in write
            else plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}


def from_fields(cls: type[T], data: Any, read: Convert | None = None, extra: bool = False) -> T:
    """The instance of the dataclass ``cls`` that ``to_fields`` wrote as ``data``; a missing key
    takes the field's default. A key that is no field is refused unless ``extra`` (a reader of
    an older or a richer record). Any problem is a ``FieldError`` of one line."""
    name = cls.__name__
    if not isinstance(data, dict):
        raise FieldError(f"{name} must be a JSON object, got {_shown(data)}")
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if not extra:
        unknown = sorted(set(data) - {f.name for f in fields}, key=str)
        if unknown:
            raise FieldError(f"{name} has no field {_shown(unknown[0])}")
    read = read or {}
    hints = _hints(cls)  # type: ignore[arg-type]
    kwargs: dict[str, Any] = {}
    for f in fields:
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise FieldError(f"{name} lacks its field {f.name!r}")
            continue
        value = data[f.name]
        try:
            kwargs[f.name] = (read[f.name](value) if f.name in read
                              else typed(hints[f.name], value))
        except FieldError as exc:
            raise FieldError(f"{name}.{f.name}: {exc}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise FieldError(f"{name}.{f.name}: {_shown(value)} is not valid ({exc})") from None
    return cls(**kwargs)


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return get_type_hints(cls)


def typed(hint: Any, value: Any) -> Any:
    """``value`` read as the type ``hint`` says; a ``FieldError`` when it is not one."""
    if hint is Any:
        return value
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        args = get_args(hint)
        if value is None and type(None) in args:
            return None
        problems = []
        for arg in (a for a in args if a is not type(None)):
            try:
                return typed(arg, value)
            except FieldError as exc:
                problems.append(str(exc))
        raise FieldError(problems[0] if len(problems) == 1 else
                         f"{_shown(value)} is none of {' | '.join(_type_name(a) for a in args)}")
    if hint is bool or hint is int or hint is str:
        if type(value) is not hint:
            raise FieldError(f"must be {_type_name(hint)}, got {_shown(value)}")
        return value
    if hint is float:
        if type(value) not in (int, float):
            raise FieldError(f"must be a number, got {_shown(value)}")
        return float(value)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            raise FieldError(f"must be one of {', '.join(repr(m.value) for m in hint)}, "
                             f"got {_shown(value)}") from None
    if origin in (tuple, list):
        if not isinstance(value, list):
            raise FieldError(f"must be a JSON array, got {_shown(value)}")
        args = get_args(hint)
        item = args[0] if args else Any
        items = [typed(item, v) for v in value]
        return tuple(items) if origin is tuple else items
    if origin is dict or hint is dict:
        if not isinstance(value, dict):
            raise FieldError(f"must be a JSON object, got {_shown(value)}")
        args = get_args(hint)
        item = args[1] if args else Any
        return {typed(str, k): typed(item, v) for k, v in value.items()}
    if isinstance(hint, type) and hasattr(hint, "from_json"):
        return hint.from_json(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return from_fields(hint, value)
    raise TypeError(f"no JSON reader for {hint!r}")


def _type_name(hint: Any) -> str:
    return {bool: "a boolean", int: "an integer", str: "a string", float: "a number",
            type(None): "null"}.get(hint, getattr(hint, "__name__", str(hint)))


def _shown(value: Any, limit: int = 60) -> str:
    text = json.dumps(value, ensure_ascii=True, default=repr)
    return text if len(text) <= limit else text[:limit - 3] + "..."
