"""Iterators that own what they read from, and closing what can be closed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

T = TypeVar("T")


class Closing(Iterator[T]):
    """`items`, which closes them and what they read from (`owned`: a generator, a file) when
    closed, started or not (a generator that never started runs no `finally`)."""

    def __init__(self, items: Iterator[T], *owned: object) -> None:
        self._items = items
        self._owned = owned

    def __iter__(self) -> Closing[T]:
        return self

    def __next__(self) -> T:
        return next(self._items)

    def close(self) -> None:
        close_all(self._items, *self._owned)


def close_all(*things: object) -> None:
    """Close each of `things` that can be closed, every one even when one fails; the first
    failure is raised after."""
    failed: BaseException | None = None
    for thing in things:
        close = getattr(thing, "close", None)
        if close is None:
            continue
        try:
            close()
        except BaseException as e:
            failed = failed or e
    if failed is not None:
        raise failed
