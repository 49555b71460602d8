"""An embedding kept compact: a packed array of doubles (8 bytes a number, where a tuple of
floats takes 32), equal to the tuple of the same numbers so entries compare as before."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from typing import Any, cast


class Vector(array):  # type: ignore[type-arg]
    """An embedding as packed doubles; equal to the tuple (or list) of the same numbers."""

    __slots__ = ()

    def __new__(cls, numbers: Iterable[float]) -> Vector:
        return cast(Vector, super().__new__(cls, "d", numbers))

    def __reduce_ex__(self, protocol: Any) -> tuple[type[Vector], tuple[list[float]]]:
        return Vector, (self.tolist(),)

    def __copy__(self) -> Vector:
        return Vector(self)

    def __deepcopy__(self, memo: Any) -> Vector:
        return Vector(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, array):
            return super().__eq__(other)
        if isinstance(other, tuple | list):
            return len(self) == len(other) and self.tolist() == list(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None

    def __repr__(self) -> str:
        return f"Vector({self.tolist()!r})"


def vector(numbers: Any) -> tuple[float, ...]:
    """A JSON array of numbers as a `Vector`, typed as the tuple `Memory` declares."""
    try:
        packed = Vector(numbers)  # sized once from a list
    except TypeError:  # numbers written as strings
        packed = Vector(map(float, numbers))
    return cast(tuple[float, ...], packed)
