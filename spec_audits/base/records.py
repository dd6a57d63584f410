"""Records: classes of named fields that behave as dataclasses do, without generating code per class.

Python 3.11's `dataclass` compiles about six methods for each frozen class with `exec` (0.4 to 1.4 ms a class);
`spec check` would build some seventy of them before reading a spec. A `Record` subclass is a plain class:
`__init_subclass__` reads its fields from the annotations of it and of the records above it (`ClassVar`s
skipped), and one generic `__init__`, `__eq__`, `__hash__` and `__repr__` serve them all. Type checkers read a
subclass as a dataclass (PEP 681's `dataclass_transform`):

    class Point(Record):            # frozen unless `class Point(Record, frozen=False)`
        x: int
        y: int = 0
        tags: list[str] = field(default_factory=list)   # or dataclasses.field(default_factory=list)

Built positionally in field order or by keyword (`kw_only=True` makes a class's own fields keyword-only), with
defaults and default factories (called per instance); `__post_init__` runs where a class defines it; equal to a
record of the same class with equal fields, hashable when frozen, unhashable otherwise (as dataclasses are);
`replaced(record, **changes)` is `dataclasses.replace`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar, dataclass_transform, overload

R = TypeVar("R", bound="Record")
T = TypeVar("T")


class _Factory:
    """A field's default factory, as `field(default_factory=...)` declares it."""

    __slots__ = ("make", "kw_only")

    def __init__(self, make: Callable[[], Any], kw_only: bool | None) -> None:
        self.make = make
        self.kw_only = kw_only


class _Default:
    """A field's default, as `field(default=...)` declares it."""

    __slots__ = ("value", "kw_only")

    def __init__(self, value: Any, kw_only: bool | None) -> None:
        self.value = value
        self.kw_only = kw_only


_REQUIRED = object()  # a field without a default


@overload
def field(*, default: T, kw_only: bool | None = None) -> T: ...
@overload
def field(*, default_factory: Callable[[], T], kw_only: bool | None = None) -> T: ...
@overload
def field(*, kw_only: bool | None = None) -> Any: ...
def field(*, default: Any = _REQUIRED, default_factory: Callable[[], Any] | None = None,
          kw_only: bool | None = None) -> Any:
    """A field's default or default factory, or that it is keyword-only (`kw_only` None: as its class says)."""
    if default is not _REQUIRED and default_factory is not None:
        raise ValueError("a field takes a default or a default_factory, not both")
    return _Factory(default_factory, kw_only) if default_factory is not None else _Default(default, kw_only)


def _from_dataclasses(spec: dataclasses.Field[Any], where: str) -> _Factory | _Default:
    """`dataclasses.field(...)` read by its documented attributes; what a record does not do is refused."""
    if not (spec.init and spec.repr and spec.compare and spec.hash is None and not spec.metadata):
        raise TypeError(f"{where}: a record field takes only default, default_factory and kw_only")
    kw_only = None if spec.kw_only is dataclasses.MISSING else bool(spec.kw_only)
    if spec.default_factory is not dataclasses.MISSING:
        return _Factory(spec.default_factory, kw_only)
    return _Default(_REQUIRED if spec.default is dataclasses.MISSING else spec.default, kw_only)


def _is_classvar(annotation: Any) -> bool:
    if isinstance(annotation, str):
        return annotation.startswith(("ClassVar", "typing.ClassVar"))
    return annotation is ClassVar or getattr(annotation, "__origin__", None) is ClassVar


def _declared(cls: type, name: str, kw_only: bool) -> tuple[Any, bool]:
    """A field's default (a `_Factory`, a value or `_REQUIRED`) and whether it is keyword-only; a field
    specifier in the class body is replaced by its default, as dataclasses do."""
    where = f"{cls.__qualname__}.{name}"
    spec = cls.__dict__.get(name, _REQUIRED)
    if isinstance(spec, dataclasses.Field):
        spec = _from_dataclasses(spec, where)
    if not isinstance(spec, _Factory | _Default):
        if isinstance(spec, list | dict | set):
            raise ValueError(f"{where}: a mutable default is shared by every record; use field(default_factory=...)")
        return spec, kw_only
    default = spec if isinstance(spec, _Factory) else spec.value
    if default is _REQUIRED or isinstance(spec, _Factory):
        delattr(cls, name)
    else:
        setattr(cls, name, default)
    return default, kw_only if spec.kw_only is None else spec.kw_only


@dataclass_transform(frozen_default=True, field_specifiers=(field, dataclasses.field))
class Record:
    """The base of every record class (see the module's docstring)."""

    _record_fields: ClassVar[dict[str, Any]] = {}  # field -> its default, a _Factory or _REQUIRED (in order)
    _record_keywords: ClassVar[frozenset[str]] = frozenset()  # the keyword-only fields
    _record_positional: ClassVar[tuple[str, ...]] = ()
    _record_frozen: ClassVar[bool | None] = None  # None: Record itself
    _kw_only_default: ClassVar[bool] = False  # a base whose subclasses' fields are all keyword-only sets it

    def __init_subclass__(cls, *, frozen: bool = True, kw_only: bool | None = None, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls._record_frozen is not None and cls._record_frozen != frozen:
            raise TypeError(f"{cls.__qualname__}: a {'' if frozen else 'non-'}frozen record cannot inherit from a "
                            f"{'' if cls._record_frozen else 'non-'}frozen one")
        cls._record_frozen = frozen
        fields, keywords = dict(cls._record_fields), set(cls._record_keywords)
        own_kw_only = cls._kw_only_default if kw_only is None else kw_only
        for name, annotation in cls.__dict__.get("__annotations__", {}).items():
            if not _is_classvar(annotation):
                fields[name], keyword = _declared(cls, name, own_kw_only)
                (keywords.add if keyword else keywords.discard)(name)
        cls._record_fields, cls._record_keywords = fields, frozenset(keywords)
        cls._record_positional = tuple(name for name in fields if name not in keywords)
        setattr(cls, "__match_args__", cls._record_positional)  # noqa: B010  # mypy refuses `cls.__match_args__ =`
        _check_order(cls)
        if frozen:
            cls.__setattr__ = _refuse_assignment  # type: ignore[method-assign]
            cls.__delattr__ = _refuse_deletion  # type: ignore[method-assign]
        elif "__hash__" not in cls.__dict__:
            cls.__hash__ = None  # type: ignore[assignment]  # as a dataclass: equal by value, so unhashable

    def __init__(self, *args: Any, **values: Any) -> None:
        cls = type(self)
        if args:
            _take_positional(cls, args, values)
        fields = cls._record_fields
        if len(values) > len(fields) or not fields.keys() >= values.keys():
            unknown = ", ".join(sorted(values.keys() - fields.keys()))
            raise TypeError(f"{cls.__qualname__} has no field {unknown} (its fields: {', '.join(fields)})")
        state = self.__dict__
        for name, default in fields.items():
            if name in values:
                state[name] = values[name]
            elif default is _REQUIRED:
                missing = ", ".join(name for name, d in fields.items() if d is _REQUIRED and name not in values)
                raise TypeError(f"{cls.__qualname__} needs a value for {missing}")
            else:
                state[name] = default.make() if isinstance(default, _Factory) else default
        if hasattr(self, "__post_init__"):
            self.__post_init__()

    def _record_values(self) -> tuple[Any, ...]:
        state = self.__dict__
        return tuple(state[name] for name in self._record_fields)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._record_values() == other._record_values()

    def __hash__(self) -> int:
        return hash(self._record_values())

    def __repr__(self) -> str:
        values = zip(self._record_fields, self._record_values(), strict=True)
        shown = ", ".join(f"{name}={value!r}" for name, value in values)
        return f"{type(self).__qualname__}({shown})"


def _refuse_assignment(record: object, name: str, value: Any) -> None:
    raise dataclasses.FrozenInstanceError(
        f"cannot assign to field {name!r}: {type(record).__qualname__} is frozen (build a new one: replaced)")


def _refuse_deletion(record: object, name: str) -> None:
    raise dataclasses.FrozenInstanceError(
        f"cannot delete field {name!r}: {type(record).__qualname__} is frozen (build a new one: replaced)")


def _take_positional(cls: type[Record], args: tuple[Any, ...], values: dict[str, Any]) -> None:
    """Positional arguments added to the keyword ones by field order (keyword-only fields skipped)."""
    positional = cls._record_positional
    if len(args) > len(positional):
        raise TypeError(f"{cls.__qualname__} takes {len(positional)} positional values ({len(args)} given)")
    for name, value in zip(positional, args, strict=False):  # fewer values than fields: the rest by keyword
        if name in values:
            raise TypeError(f"{cls.__qualname__} got two values for {name}")
        values[name] = value


def _check_order(cls: type[Record]) -> None:
    """As a dataclass: a positional field without a default may not follow one with a default."""
    defaulted = None
    for name in cls._record_positional:
        if cls._record_fields[name] is not _REQUIRED:
            defaulted = defaulted or name
        elif defaulted is not None:
            raise TypeError(f"{cls.__qualname__}: field {name!r} without a default follows {defaulted!r} (a default)")


def replaced(record: R, **changes: Any) -> R:
    """A copy of `record` with the fields in `changes` replaced (`dataclasses.replace` for records)."""
    return type(record)(**{**{name: record.__dict__[name] for name in record._record_fields}, **changes})
