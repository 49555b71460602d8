"""A parsed store file, and the protocol each on-disk format implements."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from memtui.model import Memory
from memtui.stores.file.files import store_lock
from memtui.stores.formats.records import Records
from memtui.traits import FormatTraits


@dataclass(slots=True)
class Document:
    """Everything a store file holds, parsed.

    `raws` keeps each entry exactly as the file had it (packed: `Records`), so entries memtui
    did not change are written back byte for byte and unknown keys survive. `header` is the
    rest of the file (pi's top-level keys, the longterm layout, the native meta and journal).
    """

    memories: dict[str, Memory]
    raws: Records = field(default_factory=Records)
    header: dict[str, Any] = field(default_factory=dict)

    def copy(self) -> Document:
        return Document(dict(self.memories), self.raws.copy(), dict(self.header))


class StoreFormat(Protocol):
    """One on-disk format: parse a JSON value into a Document and render it back."""

    name: str
    # what it holds and how memtui treats it (memtui/traits.py; docs/formats.md)
    traits: FormatTraits
    # the file mode new files get (pi insists on 0600).
    file_mode: int
    # the mode every write sets (None: the file keeps its own).
    rewrite_mode: int | None

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        """The parsed store when the JSON value `value` (read from `data`) is a store of this
        format; None when it is not one (a StoreFormatError when it is one, damaged)."""
        ...

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        """The same for a file orjson does not read as one JSON value (JSON Lines, a value
        only JavaScript reads)."""
        ...

    def recognise_bytes(self, data: bytes, path: Path) -> Document | None:
        """The parsed store when the file is one this format reads without the whole file's
        JSON value (a big file in its own layout, a slice at a time); else None (then the
        value is read and `recognise` asked)."""
        ...

    def parse(self, value: Any, path: Path) -> Document: ...

    def render(self, doc: Document, now: datetime | None) -> bytes: ...

    def render_parts(self, doc: Document, now: datetime | None) -> Iterator[bytes]:
        """`render`'s bytes a piece at a time, each made when it is reached (a commit writes
        a big store without its whole file in memory)."""
        ...

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        """One record of this format (as `encode` wrote it) back into a Memory."""
        ...

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        """The format's own record for `memory`, on top of the record it was read from."""
        ...

    def encode_image(
        self, memory: Memory, image: dict[str, Any], base: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, bool]:
        """`encode(memory, base)`, for a commit that holds `image` (`memory.to_dict()`)
        already, and whether `record_image(image, record)` is None for the record made."""
        ...

    def keeps(self, memory: Memory) -> bool:
        """Whether the file holds an entry in this state (its traits' `keeps`)."""
        ...

    def successor(self, raw: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
        """The record to write over the file's record `current` (None: a new entry); formats
        with an optimistic version counter move it forward here."""
        ...

    def record_image(self, image: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        """What the ledger keeps of the record `raw` beside an entry's image (`to_dict`):
        None when the image re-encodes to it exactly."""
        ...

    def new_id(self, doc: Document, now: datetime) -> str: ...

    def header(self, doc: Document) -> dict[str, Any] | None:
        """The file's own top-level bookkeeping, as the ledger records it beside a
        transaction (None: the format keeps none)."""
        ...

    def write_header(
        self, doc: Document, now: datetime, *, added: int, revert: HeaderImages | None
    ) -> None:
        """Set `doc`'s bookkeeping for a write at `now` that adds `added` entries, or (undo,
        rollback) that reverts memtui's own change `revert` = (before, after)."""
        ...

    def write_lock(self, file: Path) -> AbstractContextManager[None]:
        """The locks memtui holds while it reads and replaces `file` to write it: its own
        protocol, and the agent's lock where the agent takes one."""
        ...

    def plan_notes(self, before: Document, after: Document) -> list[str]:
        """What a plan should say about the store going from `before` to `after` (a limit of
        the agent's it would pass), one line each; nothing is written."""
        ...

    def export_header(self, source: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
        """The header of an export to this format: the source's own when the source is of
        this format (`source`), else a new file's."""
        ...


HeaderImages = tuple[dict[str, Any], dict[str, Any]]


class FormatDefaults:
    """The hooks of a format that reads only whole JSON values and keeps no top-level
    bookkeeping of its own."""

    traits = FormatTraits()
    rewrite_mode: int | None = None

    def keeps(self, memory: Memory) -> bool:
        return memory.status in self.traits.keeps

    def encode_image(
        self: StoreFormat, memory: Memory, image: dict[str, Any], base: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, bool]:
        return self.encode(memory, base), False

    def render_parts(self: StoreFormat, doc: Document, now: datetime | None) -> Iterator[bytes]:
        yield self.render(doc, now)

    def new_id(self, doc: Document, now: datetime) -> str:
        return self.traits.ids.fresh(doc.memories.keys(), now)

    def export_header(self, source: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
        """The header of an export to this format: the source's own when the source is of
        this format (`source`), else a new file's."""
        return dict(source) if source is not None else {}

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        return None

    def recognise_bytes(self, data: bytes, path: Path) -> Document | None:
        return None

    def header(self, doc: Document) -> dict[str, Any] | None:
        return None

    def write_header(
        self, doc: Document, now: datetime, *, added: int, revert: HeaderImages | None
    ) -> None:
        return None

    def successor(self, raw: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
        """The record as it is (a format with a version counter moves it forward)."""
        return raw

    def record_image(self, image: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        """The record itself: the ledger keeps it so undo writes it back byte for byte."""
        return raw

    def plan_notes(self, before: Document, after: Document) -> list[str]:
        return []

    def write_lock(self, file: Path) -> AbstractContextManager[None]:
        """pi's lock protocol on `<file>.lock` (the agent takes no lock of its own)."""
        return store_lock(file)
