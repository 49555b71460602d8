"""`Records`: each entry's record as its store file holds it, by id, kept packed.

An open store keeps every entry twice: as the `Memory` every layer reads, and as the file's own
record, so that what memtui does not change is written back as it was. A record kept as a dict
costs about 630 bytes for a dozen keys (1M entries: 630 MB); kept as one tuple of its values,
with its keys' tuple (the records of one file share a handful), it costs about 150. Reading a
record gives a new dict with the same keys, in the same order, holding the same values: change
a record by setting it again, never in place.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping
from typing import Any

Record = dict[str, Any]


class Records(MutableMapping[str, Record]):
    __slots__ = ("_packed", "_shapes")

    def __init__(self, records: Mapping[str, Record] | Iterable[tuple[str, Record]] = ()) -> None:
        self._packed: dict[str, tuple[Any, ...]] = {}
        self._shapes: dict[tuple[str, ...], tuple[str, ...]] = {}
        pairs = records.items() if isinstance(records, Mapping) else records
        for ident, record in pairs:
            self[ident] = record

    def __getitem__(self, ident: str) -> Record:
        packed = self._packed[ident]
        return _unpacked(packed)

    def get(self, ident: str, default: Any = None) -> Any:
        packed = self._packed.get(ident)
        return default if packed is None else _unpacked(packed)

    def __setitem__(self, ident: str, record: Record) -> None:
        if type(record) is not dict:
            raise TypeError(f"a store record is a dict, not {type(record).__name__}")
        keys = tuple(record)
        self._packed[ident] = (*record.values(), self._shapes.setdefault(keys, keys))

    def setter(self) -> Callable[[str, Record], None]:
        """`self[ident] = record` for a store's records as they are read (a dict each)."""
        packed, shape = self._packed, self._shapes.setdefault

        def put(ident: str, record: Record) -> None:
            keys = tuple(record)
            packed[ident] = (*record.values(), shape(keys, keys))

        return put

    def __delitem__(self, ident: str) -> None:
        del self._packed[ident]

    def pop(self, ident: str, *default: Any) -> Any:
        packed = self._packed.pop(ident, None)
        if packed is not None:
            return _unpacked(packed)
        if default:
            return default[0]
        raise KeyError(ident)

    def __contains__(self, ident: object) -> bool:
        return ident in self._packed

    def __iter__(self) -> Iterator[str]:
        return iter(self._packed)

    def __len__(self) -> int:
        return len(self._packed)

    def __repr__(self) -> str:
        return f"Records({dict(self.items())!r})"

    def same_as(self, other: Records, ident: str) -> bool:
        """Whether `ident`'s record here is the one `other` holds: the same values (at once
        when neither was set again since one was copied from the other)."""
        mine, theirs = self._packed.get(ident), other._packed.get(ident)
        if mine is theirs:
            return mine is not None
        if mine is None or theirs is None:
            return False
        return dict(zip(mine[-1], mine, strict=False)) == dict(
            zip(theirs[-1], theirs, strict=False)
        )

    def copy(self) -> Records:
        out = Records()
        out._packed = dict(self._packed)
        out._shapes = self._shapes
        return out


def _unpacked(packed: tuple[Any, ...]) -> Record:
    # a record packs as its values, then its keys' tuple: zip stops at the keys' end
    return dict(zip(packed[-1], packed, strict=False))
