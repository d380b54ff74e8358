"""Records: classes of named, typed fields that a SessionStart's brief builds or reads (the loaded
configuration, the index's lines, a snapshot read back, the verifier's checks). `dataclasses`
makes the same classes by compiling six methods of each from source at import (`__init__`,
`__repr__`, `__eq__`, `__hash__`, `__setattr__`, `__delattr__`): the 26 classes on the brief's
path were 14 ms of its CPU (docs/performance.md). A record shares the five that need no code of
their own and compiles its `__init__` (instances of the index's lines are made by the thousand)
when its first instance is made: most classes a hook process imports, it never instantiates.

`class Name(Record)` is `@dataclass`, `class Name(Record, frozen=True)` is
`@dataclass(frozen=True)` and `field(default_factory=list)` is dataclasses' own: mypy reads a
record as a dataclass (`dataclass_transform`). `replace` and `as_dict` are
`dataclasses.replace` and `dataclasses.asdict` of a record whose fields hold no record."""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, Self, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_):
        return lambda decorated: decorated


class FrozenRecordError(AttributeError):
    """A field of a frozen record assigned or deleted (dataclasses' FrozenInstanceError)."""


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], object]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], T]) -> T:
    """A field whose default is made anew for each record (a list, a dict)."""
    return _Factory(default_factory)  # type: ignore[return-value]


@dataclass_transform(field_specifiers=(field,))
class Record:
    """A class of fields, in the order its annotations name them; `frozen=True` as a class
    argument makes its records immutable and hashable, as dataclasses' does."""

    field_names: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, *, frozen: bool = False, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if any(issubclass(base, Record) and base.field_names for base in cls.__bases__):
            raise TypeError(f"{cls.__qualname__}: a record's fields are its own; it cannot extend another's")
        # Not inspect.get_annotations: importing inspect is what records spare a hook. With
        # `from __future__ import annotations` every annotation is its text.
        annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
        cls.field_names = tuple(n for n, kind in annotations.items() if not str(kind).startswith("ClassVar"))
        cls.__init__ = _init_compiled_when_first_called(cls)  # type: ignore[method-assign]
        if frozen:
            cls.__setattr__ = _frozen_setattr  # type: ignore[assignment]
            cls.__delattr__ = _frozen_delattr  # type: ignore[assignment]
            cls.__hash__ = _hash_of_fields  # type: ignore[assignment]
        else:
            cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.field_names)
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return _values(self) == _values(other)

    def replace(self, **changes: Any) -> Self:
        """A record of the same class with `changes` to its fields (dataclasses.replace)."""
        unknown = set(changes) - set(self.field_names)
        if unknown:
            raise TypeError(f"{type(self).__qualname__} has no field {', '.join(sorted(unknown))}")
        return type(self)(**{name: changes.get(name, getattr(self, name)) for name in self.field_names})

    def as_dict(self) -> dict[str, Any]:
        """Each field by its name, in order (dataclasses.asdict of a record of plain values)."""
        return {name: getattr(self, name) for name in self.field_names}


def _values(record: Record) -> tuple:
    return tuple(getattr(record, name) for name in record.field_names)


def _hash_of_fields(self: Record) -> int:
    return hash(_values(self))


def _frozen_setattr(self: Record, name: str, value: object) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: Record, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}")


def _init_compiled_when_first_called(cls: type[Record]) -> Callable[..., None]:
    """`cls`'s `__init__`, compiled when the first record of `cls` is made (most classes a hook
    process imports, it never instantiates); the factories leave the class at once, as with
    dataclasses."""
    source, namespace = _init_source(cls)

    def __init__(self: Record, *args: Any, **kwargs: Any) -> None:
        made: dict[str, Any] = {}
        exec(source, namespace, made)  # noqa: S102 -- the source is made here of the class's own field names
        compiled = made["__init__"]
        compiled.__qualname__ = f"{cls.__qualname__}.__init__"
        cls.__init__ = compiled  # type: ignore[method-assign]
        compiled(self, *args, **kwargs)

    return __init__


def _init_source(cls: type[Record]) -> tuple[str, dict[str, object]]:
    """The source of `cls`'s `__init__`, taking its fields in order, by position or name (a field
    with a default, its class attribute, or a default factory, `field`, may be left out), and
    the defaults it names. It writes the instance's dictionary, which a frozen record's
    `__setattr__` refuses."""
    parameters, assignments = [], []
    defaults: dict[str, object] = {}
    for name in cls.field_names:
        default = cls.__dict__.get(name, _Factory)
        if isinstance(default, _Factory):
            delattr(cls, name)  # as dataclasses does: the factory is no class attribute
            defaults[f"_factory_{name}"] = default
            parameters.append(f"{name}=_factory_{name}")
            assignments.append(
                f"    fields[{name!r}] = _factory_{name}.make() if {name} is _factory_{name} else {name}"
            )
            continue
        if default is not _Factory:
            defaults[f"_default_{name}"] = default
            parameters.append(f"{name}=_default_{name}")
        else:
            parameters.append(name)
        assignments.append(f"    fields[{name!r}] = {name}")
    source = f"def __init__(self, {', '.join(parameters)}):\n    fields = self.__dict__\n" + "\n".join(
        assignments or ["    pass"]
    )
    return source, defaults
