# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""The fallback path of decoding: only when msgspec's strict decoder rejects a message.

It walks the already-parsed JSON with the type annotations and applies what msgspec alone
cannot express:

- unknown variants of open unions become `OpenVariant` dicts that keep every key
  and re-encode unchanged;
- untagged alternatives (and default variants without a tag) are tried in schema order;
- fields marked `x-deserialize-default-on-error` / `-default-on-null` fall back to
  "omitted", lists marked `x-deserialize-skip-invalid-items` drop bad items (a type's
  `__acp_lenient__` names its fields' flags; a `_meta` it does not name is lenient on error,
  see `schema.lenient_flags`).

Valid input never reaches it, so leniency costs nothing there. Anything still invalid raises
`msgspec.ValidationError` naming the JSON path that failed. The same walk, strict, checks
what we send (see `check`).
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from typing import Any, Union

import msgspec
from msgspec import UnsetType

from .schema import (
    ON_ERROR,
    ON_NULL,
    SKIP_INVALID,
    OpenEnum,
    UnionInfo,
    lenient_flags,
    variants_by_tag,
)

__all__ = ["convert", "rebase", "repair"]


def _error(message: str, path: str) -> msgspec.ValidationError:
    return msgspec.ValidationError(f"{message} - at `{path}`")


def rebase(exc: msgspec.ValidationError, path: str, root: str = "$") -> msgspec.ValidationError:
    """msgspec's error for a sub-value, its path's `root` replaced by where the value sits
    (`root` is `$.v` for an error from a boxed convert, see `_Target`)."""
    text = str(exc)
    head, marker, tail = text.rpartition(f" - at `{root}")
    if marker and tail[:1] in ("`", ".", "["):
        return msgspec.ValidationError(f"{head} - at `{path}{tail}")
    return _error(text, path)


def _unknown_value(
    value: str, what: str, known: Any, path: str, default: bool = False
) -> msgspec.ValidationError:
    allowed = "".join(f"{k!r}, " for k in known) + (
        "none (the default variant), " if default else ""
    )
    return _error(
        f"Unknown {what} {value!r}: this schema release allows {allowed}or an `_`-prefixed "
        "extension (other values are reserved for future ACP versions)",
        path,
    )


def convert(obj: Any, tp: Any, path: str = "$", strict: bool = False) -> Any:
    """Convert parsed JSON to `tp`: msgspec first, the schema's fallback rules where it fails.

    `strict`: the fallback applies no leniency and accepts an unknown enum value or union tag
    only when it begins with `_` (what a sender of this release may send)."""
    target = _target(tp, strict)
    try:
        return msgspec.convert({"v": obj}, target.box).v
    except msgspec.ValidationError as exc:
        return target.repair(obj, path, exc)


class _Target:
    """What the fallback knows about one type, worked out once (typing introspection and
    msgspec's handling of a non-struct type are slow when repeated per value).

    `box`: a one-field struct around the type. msgspec caches what it knows about a struct
    type, but re-reads any other type (a union, `Annotated[...]`) on every `convert` (~15x
    slower); errors therefore come out at `$.v...`, and `fail` puts the real path there.
    """

    __slots__ = ("args", "box", "fields", "repair", "strict", "tp")

    def __init__(self, tp: Any, strict: bool) -> None:
        self.tp = tp
        self.strict = strict
        self.box: type[Any] = msgspec.defstruct("Box", [("v", tp)])
        self.args: Any = None
        self.fields: tuple[tuple[msgspec.structs.FieldInfo, int, _Target], ...] | None = None
        self.repair: Callable[[Any, str, msgspec.ValidationError], Any] = self._fail
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            inner, *metadata = typing.get_args(tp)
            info = next((m for m in metadata if isinstance(m, UnionInfo)), None)
            open_enum = next((m for m in metadata if isinstance(m, OpenEnum)), None)
            if info is not None:
                self.args, self.repair = (info, variants_by_tag(info, inner)), self._union
            elif open_enum is not None:
                self.args, self.repair = (open_enum.base, typing.get_args(inner)), self._open_enum
            elif typing.get_origin(inner) is list:
                lengths = [m.min_length for m in metadata if isinstance(m, msgspec.Meta)]
                min_length = next((n for n in lengths if n is not None), None)
                self.args, self.repair = (_target(inner, strict), min_length), self._bounded_list
        elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            fields = [(f, lenient_flags(tp, f)) for f in msgspec.structs.fields(tp)]
            self.args, self.repair = tuple(fields), self._struct
        elif origin is Union or origin is types.UnionType:
            members = typing.get_args(tp)
            candidates = tuple(m for m in members if m is not type(None) and m is not UnsetType)
            self.args, self.repair = (type(None) in members, candidates), self._plain_union
        elif origin is list:
            self.args, self.repair = typing.get_args(tp)[0], self._list
        elif origin is dict:
            self.args, self.repair = typing.get_args(tp)[1], self._dict

    @staticmethod
    def _fail(obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        raise rebase(exc, path, root="$.v")

    def _union(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        info: UnionInfo = self.args[0]
        variants: dict[str, type[Any]] = self.args[1]
        if info.tag_field is not None and isinstance(obj, dict) and info.tag_field in obj:
            tag = obj[info.tag_field]
            variant = variants.get(tag) if isinstance(tag, str) else None
            if variant is not None:  # a known tag with a bad payload stays an error
                # msgspec already failed on exactly this variant (same error, same path):
                # straight to its repair, without converting it again
                return _target(variant, self.strict).repair(obj, path, exc)
            if self.strict and isinstance(tag, str) and not tag.startswith("_"):
                what, where = f"`{info.tag_field}` of {info.name}", f"{path}.{info.tag_field}"
                default = bool(info.alternatives)
                raise _unknown_value(tag, what, variants, where, default)
            if info.unknown is not None and isinstance(tag, str):
                return info.unknown(obj)
        failures: list[msgspec.ValidationError] = []
        for member in info.alternatives:
            try:
                return convert(obj, member, path, self.strict)
            except msgspec.ValidationError as error:
                failures.append(error)
        if len(failures) == 1 and isinstance(obj, dict):
            raise failures[0]  # the one candidate (a default variant): its error names the field
        if info.tag_field is not None and isinstance(obj, dict):
            if info.tag_field not in obj:
                raise _error(f"Object missing required field `{info.tag_field}`", path)
            tag_path = f"{path}.{info.tag_field}"
            raise _error(f"Invalid value {obj[info.tag_field]!r} for {info.name}", tag_path)
        raise _error(f"Expected `{info.name}`, got `{type(obj).__name__}`", path)

    def _open_enum(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        base, known = self.args
        if type(obj) is not base:
            return self._fail(obj, path, exc)
        # Unknown strings are reserved for future ACP versions; an integer one (an error code)
        # is simply another value.
        if self.strict and isinstance(obj, str) and not obj.startswith("_"):
            raise _unknown_value(obj, "value", known, path)
        return obj

    def _bounded_list(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        items, min_length = self.args
        result = items.repair(obj, path, exc)
        if min_length is not None and len(result) < min_length:
            raise _error(f"Expected `array` of length >= {min_length}", path)
        return result

    def _struct(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        if not isinstance(obj, dict):
            raise _error(f"Expected `object`, got `{type(obj).__name__}`", path)
        fields = self.fields
        if fields is None:  # on first use: a struct may contain itself, so not in __init__
            fields = self.fields = tuple(
                (f, 0 if self.strict else flags, _target(f.type, self.strict))
                for f, flags in self.args
            )
        kwargs: dict[str, Any] = {}
        for field, flags, target in fields:
            name = field.encode_name
            if name not in obj:
                if field.required:
                    raise _error(f"Object missing required field `{name}`", path)
                continue
            value = obj[name]
            if value is None and flags & ON_NULL:
                continue
            try:
                if flags & SKIP_INVALID and isinstance(value, list):
                    kwargs[field.name] = _skip_invalid(value, field.type, f"{path}.{name}")
                    continue
                try:  # convert() inlined: the path string is only built for a failure
                    kwargs[field.name] = msgspec.convert({"v": value}, target.box).v
                except msgspec.ValidationError as error:
                    kwargs[field.name] = target.repair(value, f"{path}.{name}", error)
            except msgspec.ValidationError:
                if flags & ON_ERROR:
                    continue
                raise
        try:
            return self.tp(**kwargs)
        except (ValueError, TypeError) as error:
            raise _error(str(error), path) from None

    def _plain_union(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        nullable, candidates = self.args
        if obj is None and nullable:
            return None
        if len(candidates) == 1:  # msgspec just failed on it: straight to its repair
            return _target(candidates[0], self.strict).repair(obj, path, exc)
        for member in candidates:
            try:
                return convert(obj, member, path, self.strict)
            except msgspec.ValidationError:
                continue
        return self._fail(obj, path, exc)

    def _list(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        if not isinstance(obj, list):
            return self._fail(obj, path, exc)
        return [convert(v, self.args, f"{path}[{i}]", self.strict) for i, v in enumerate(obj)]

    def _dict(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        if not isinstance(obj, dict):
            return self._fail(obj, path, exc)
        return {k: convert(v, self.args, f"{path}.{k}", self.strict) for k, v in obj.items()}


_TARGETS: dict[bool, dict[int, _Target]] = {False: {}, True: {}}


def _target(tp: Any, strict: bool = False) -> _Target:
    """The cached _Target of `tp`, looked up by identity (hashing typing objects is slow);
    the entry keeps `tp` alive, so its id is never reused."""
    targets = _TARGETS[strict]
    target = targets.get(id(tp))
    if target is None or target.tp is not tp:
        target = targets[id(tp)] = _Target(tp, strict)
    return target


def _skip_invalid(items: list[Any], tp: Any, path: str) -> list[Any]:
    list_type = next(
        (m for m in (typing.get_args(tp) or (tp,)) if typing.get_origin(m) is list), None
    )
    if list_type is None:
        return convert(items, tp, path)  # type: ignore[no-any-return]
    (item_type,) = typing.get_args(list_type)
    kept = []
    for i, item in enumerate(items):
        try:
            kept.append(convert(item, item_type, f"{path}[{i}]"))
        except msgspec.ValidationError:
            continue
    return kept


def repair(tp: Any, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
    """`obj` as `tp` by the fallback rules, after msgspec failed on it with `exc` (an error
    as a boxed convert gives it: see `_Target`)."""
    return _target(tp).repair(obj, path, exc)
