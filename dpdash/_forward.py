"""A read-only attribute that shows a member's value as the owner's own (``VectorMechanism.epsilon`` is its
base mechanism's ε, ``Entry.query`` its event's query): one descriptor instead of a property per name."""

from __future__ import annotations

from operator import attrgetter
from typing import Any, Generic, TypeVar, overload

__all__ = ["Forwarded"]

T = TypeVar("T")


class Forwarded(Generic[T]):
    """``name = Forwarded[T]("member.attribute", "doc")``: reading ``obj.name`` returns
    ``obj.member.attribute`` (a dotted path, evaluated on each read); assigning to it is refused.

    >>> class Pair:
    ...     def __init__(self, inner: complex) -> None:
    ...         self.inner = inner
    ...     real = Forwarded[float]("inner.real", "The real part of ``inner``.")
    >>> Pair(3 + 4j).real, Pair.real.__doc__
    (3.0, 'The real part of ``inner``.')
    """

    def __init__(self, path: str, doc: str | None = None) -> None:
        self.path = path
        self._get = attrgetter(path)
        self._name = path
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Forwarded[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return self._get(obj)

    def __set__(self, obj: object, value: object) -> None:
        raise AttributeError(f"{self._name} is read-only: it is {self.path}")
