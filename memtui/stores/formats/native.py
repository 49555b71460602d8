"""memtui's own store: a TinyDB database file with tables `memories`, `journal` and `meta`.

The file is plain TinyDB JSON (TinyDB opens it), but memtui reads and writes it whole: one
commit is one atomic rewrite, never TinyDB's one rewrite per document. The ledger (journal)
lives in the same file, so a commit and its ledger entry land together.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import datetime
from itertools import chain, islice
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import StoreFormatError
from memtui.jsonout import NotOrjson, dumps, strict_dumps
from memtui.model import NO_EXTRA, Memory, Source, Status
from memtui.stores.formats.document import Document, FormatDefaults
from memtui.stores.formats.fields import (
    MAX_CONTENT_CHARS,
    NUMBERS,
    OPT_BOOL,
    OPT_DICT,
    OPT_INT,
    OPT_LIST,
    OPT_NUM,
    OPT_STR,
    EntryReader,
    Share,
    json_type_name,
    new_share,
)
from memtui.stores.formats.pi_json import PiJsonError, read_checked
from memtui.stores.formats.records import Records
from memtui.stores.ledger import entry_parts, journal_value, kept_entry
from memtui.times import format_iso, parse_iso
from memtui.traits import OWN_IDS, FormatTraits

SCHEMA_VERSION = 1
TABLES = ("memories", "journal", "meta")
_STATUSES = frozenset(s.value for s in Status)
_SOURCES = frozenset(s.value for s in Source)


def is_native(value: Any) -> bool:
    if not isinstance(value, dict) or not isinstance(value.get("meta"), dict):
        return False
    return any(isinstance(doc, dict) and "memtui_schema" in doc for doc in value["meta"].values())


def new_meta(now: datetime, **fields: Any) -> dict[str, Any]:
    return {"memtui_schema": SCHEMA_VERSION, "created_at": format_iso(now), **fields}


class NativeFormat(FormatDefaults):
    name = "native"
    traits = FormatTraits(ids=OWN_IDS, export_as="native", ledger_in_store=True)
    file_mode = 0o600

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        return self.parse(value, path) if is_native(value) else None

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        """A store holding a lone surrogate (imported from pi), which orjson does not read."""
        try:
            value = read_checked(data)
        except PiJsonError:
            return None
        return self.recognise(value, data, path)

    def recognise_bytes(self, data: bytes, path: Path) -> Document | None:
        """A big file in memtui's own layout, read a slice of its records at a time (the
        whole file's JSON value at once is most of the peak of opening it: 1M entries, 1.2 GB
        of dicts); None for anything else, which is then read whole."""
        sliced = _record_slices(data)
        if sliced is None:
            return None
        slices, last = sliced
        try:
            # the last slice of records with the rest of the file: every table, few records
            value = orjson.loads(b"".join((_HEAD, memoryview(data)[last:])))
        except orjson.JSONDecodeError:
            return None
        if not is_native(value) or not isinstance(value.get("memories"), dict):
            return None
        try:
            return self.parse(value, path, _sliced_records(data, slices, value["memories"]))
        except (_NotSliceable, StoreFormatError):
            # (a record refused in one slice may be one a later slice replaces: the whole
            # file's reading decides, and says what is wrong)
            return None

    def parse(
        self, value: Any, path: Path, earlier: Iterator[dict[str, Any]] | None = None
    ) -> Document:
        """`earlier`: the slices of records before those of the table in `value` (a file
        read in slices), in file order."""
        meta_key, meta = next(
            (k, d) for k, d in value["meta"].items() if isinstance(d, dict) and "memtui_schema" in d
        )
        schema = meta.get("memtui_schema")
        if schema != SCHEMA_VERSION:
            raise StoreFormatError(
                f"{path}: native schema version {schema!r} is not one this memtui reads "
                f"(it reads {SCHEMA_VERSION}); upgrade memtui"
            )
        table = value.get("memories", {})
        journal = value.get("journal", {})
        for name, t in (("memories", table), ("journal", journal)):
            if not isinstance(t, dict):
                raise StoreFormatError(
                    f"{path}: table {name!r} must be an object, got {json_type_name(t)}"
                )
        # damaged entries too: the store reports them (and writes nothing) until repaired;
        # a big one kept as its JSON, its dicts let go of before the records are read
        transactions = [kept_entry(entry) for entry in journal.values()]
        journal.clear()
        memories: dict[str, Memory] = {}
        raws = Records()
        share = new_share()
        pack = raws.setter()
        for part in chain(earlier or (), (table,)):
            for doc_id, record in part.items():
                memory = _read(record, path, doc_id, share)
                if memory.id in memories:
                    raise StoreFormatError(
                        f"{path}: memories[{doc_id}] repeats the id {memory.id!r}"
                    )
                memories[memory.id] = memory
                pack(memory.id, record)
            part.clear()  # its dicts let go of, now packed
        # what memtui does not own (other tables, other meta documents, the table order) is
        # written back as it was
        header = {
            "meta": meta,
            "journal": transactions,
            "meta_key": meta_key,
            "meta_table": value["meta"],
            "tables": {k: (None if k in TABLES else v) for k, v in value.items()},
        }
        return Document(memories, raws, header)

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        return _read(raw, path, "")

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        return _compact(memory.to_dict())

    def encode_image(
        self, memory: Memory, image: dict[str, Any], base: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, bool]:
        return _compact(image), True  # the image compacts to its record

    def render(self, doc: Document, now: datetime | None) -> bytes:
        try:
            return b"".join(self.render_parts(doc, now))
        except NotOrjson:  # a value orjson refuses: the whole file in the standard library's
            tables = {
                name: (dict(rows()) if rows else table) for name, (table, rows) in _tables(doc)
            }
            tables["journal"] = {k: journal_value(e) for k, e in tables["journal"].items()}
            return dumps(tables)

    def render_parts(self, doc: Document, now: datetime | None) -> Iterator[bytes]:
        """The file's JSON object a table at a time, the records `_PART_ROWS` at a time (one
        part's dicts made at once), the journal an entry at a time; NotOrjson where orjson
        cannot write a part (the file is then written whole: `render`)."""
        yield b"{"
        for n, (name, (table, rows)) in enumerate(_tables(doc)):
            yield (b"," if n else b"") + strict_dumps(name) + b":"
            if rows is None:
                yield strict_dumps(table, 1)  # (as deep as within the file's object)
                continue
            yield b"{"
            size = 1 if name == "journal" else _PART_ROWS
            made = rows()
            first = True
            while part := dict(islice(made, size)):
                if name == "journal":  # a transaction can hold every entry of the store
                    ((key, entry),) = part.items()
                    yield (b"" if first else b",") + strict_dumps(key) + b":"
                    yield from entry_parts(entry)
                else:
                    yield (b"" if first else b",") + strict_dumps(part, 1)[1:-1]
                first = False
            yield b"}"
        yield b"}"

    def successor(self, raw: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
        """The record to write over `current` (this format keeps no version counter)."""
        return raw

    def record_image(self, image: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        """The record to keep in the ledger beside an entry's image: only when re-encoding the
        image would not give the file's record back (out-of-range values, unknown keys), so
        undo restores the record as it was and the journal stays small."""
        return None if _compact(image) == raw else raw

    def export_header(self, source: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
        """A native source's header (its journal with it), else a new store's meta."""
        return dict(source) if source is not None else {"meta": new_meta(now), "journal": []}


_Rows = Callable[[], Iterator[tuple[str, Any]]]


def _tables(doc: Document) -> Iterator[tuple[str, tuple[Any, _Rows | None]]]:
    """The file's tables in its order (ours where they were, or at the end), each as the
    value of a table memtui does not own or, for ours, a maker of its rows."""
    header = doc.header
    meta_table = dict(header.get("meta_table") or {})
    meta_table[header.get("meta_key", "1")] = header["meta"]
    raws = doc.raws
    ours: dict[str, _Rows] = {
        "memories": lambda: ((str(n), raws[i]) for n, i in enumerate(doc.memories, start=1)),
        "journal": lambda: ((str(n), tx) for n, tx in enumerate(header["journal"], start=1)),
        "meta": lambda: iter(meta_table.items()),
    }
    tables: dict[str, Any] = dict(header.get("tables") or {})
    tables.update(ours)
    for name, table in tables.items():
        yield name, ((None, ours[name]) if name in ours else (table, None))


_HEAD = b'{"memories":{'
_NEXT_RECORD = re.compile(rb'\},"(\d+)":\{')
"""Where one record of the table ends and the next begins, in memtui's compact layout (in a
string a quote is escaped; where this matches inside a record's nested object, a slice is
not JSON and the file is read whole)."""
_SLICE_BYTES = 8 << 20
_PART_ROWS = 5000


class _NotSliceable(Exception):
    """The file's slices do not read as the whole file would: read it whole."""


def _record_slices(data: bytes) -> tuple[list[tuple[int, int]], int] | None:
    """Where each slice of the records table starts (its first key's quote) and ends (past
    its last record's closing brace), and where the last slice starts (read with the rest of
    the file); None for a file read whole (small, or not in memtui's layout)."""
    if len(data) < 2 * _SLICE_BYTES or not data.startswith(_HEAD):
        return None
    slices = []
    start = len(_HEAD)
    key = 0
    while (found := _NEXT_RECORD.search(data, start + _SLICE_BYTES)) is not None:
        # memtui numbers the records 1, 2, …: a key not past the last cut's is another
        # table's (the journal's), where the records table has ended
        if int(found.group(1)) <= key:
            break
        key = int(found.group(1))
        slices.append((start, found.start() + 1))
        start = found.start() + 2
    return (slices, start) if slices else None


def _sliced_records(
    data: bytes, slices: list[tuple[int, int]], last: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """The records of each slice in turn, a slice's dicts made when it is reached (`last`:
    the records of the last slice, read with the rest of the file: read after these)."""
    seen: set[str] = set(last)
    view = memoryview(data)
    for start, end in slices:
        try:
            part = orjson.loads(b"".join((b"{", view[start:end], b"}")))
        except orjson.JSONDecodeError:
            raise _NotSliceable from None
        if not seen.isdisjoint(part):  # a key twice: the whole file's value keeps the last
            raise _NotSliceable
        seen.update(part)
        yield part


def _compact(record: dict[str, Any]) -> dict[str, Any]:
    """A record without the fields at their defaults: a smaller file that loads faster."""
    return {k: v for k, v in record.items() if not (v is None or v is False or v == [] or v == {})}


def _read(record: Any, path: Path, doc_id: str, share: Share | None = None) -> Memory:
    try:
        return _build(record, share or new_share())
    except (TypeError, ValueError, OverflowError, KeyError, AttributeError):
        return _decode(EntryReader(path, f"memories[{doc_id}]", record))


_SOURCE_OF = {s.value: s for s in Source}  # a dict look-up costs a fifth of an Enum call
_STATUS_OF = {s.value: s for s in Status}


def _build(rec: dict[str, Any], share: Share) -> Memory:
    """The fast path for well-formed records; anything unexpected raises and `_decode` then
    reads the record field by field and names the problem. Repeated strings (categories,
    users, sources, statuses, equal times) become one object in the record and the entry."""
    get = rec.get
    ident, content = rec["id"], rec["content"]
    category, importance, user, by = (
        get("category"),
        get("importance"),
        get("user_id"),
        get("superseded_by"),
    )
    accesses, evidence, version = get("access_count"), get("evidence_count"), get("version")
    tags, paths, supersedes = get("tags"), get("paths"), get("supersedes")
    embedding, extra, tenured = get("embedding"), get("extra"), get("tenured")
    source, status = get("source"), get("status")
    created, accessed, decayed = get("created_at"), get("last_accessed_at"), get("last_decayed_at")
    updated, superseded_at = get("updated_at"), get("superseded_at")
    if not (
        type(ident) is str
        and ident
        and type(content) is str
        and len(content) <= MAX_CONTENT_CHARS
        and type(category) in OPT_STR
        and type(importance) in OPT_NUM
        and type(user) in OPT_STR
        and type(by) in OPT_STR
        and type(accesses) in OPT_INT
        and type(evidence) in OPT_INT
        and type(version) in OPT_INT
        and type(tenured) in OPT_BOOL
        and type(extra) in OPT_DICT
        and type(tags) in OPT_LIST
        and type(paths) in OPT_LIST
        and type(supersedes) in OPT_LIST
        and (not tags or all(type(t) is str for t in tags))
        and (not paths or all(type(p) is str for p in paths))
        and (not supersedes or all(type(i) is str for i in supersedes))
        and type(embedding) in OPT_LIST
        and (embedding is None or all(type(x) in NUMBERS for x in embedding))
        and type(created) in OPT_STR
        and type(accessed) in OPT_STR
        and type(decayed) in OPT_STR
        and type(updated) in OPT_STR
        and type(superseded_at) in OPT_STR
        and type(source) in OPT_STR
        and type(status) in OPT_STR
    ):
        raise ValueError("wrong type")
    if category:
        rec["category"] = category = share(category, category)
    if user is not None:
        rec["user_id"] = user = share(user, user)
    if source:
        rec["source"] = source = share(source, source)
    if status:
        rec["status"] = status = share(status, status)
    created_at = parse_iso(created)
    if accessed == created:
        accessed_at = created_at
        if accessed is not None:
            rec["last_accessed_at"] = accessed = created
    else:
        accessed_at = parse_iso(accessed)
    if decayed == accessed:
        decayed_at = accessed_at
        if decayed is not None:
            rec["last_decayed_at"] = accessed
    else:
        decayed_at = parse_iso(decayed)
    if importance is None:
        importance = 0.8
    elif not 0.0 < importance <= 1.0:  # (0 and -0.0 as 0.0)
        importance = min(1.0, max(0.0, float(importance)))
    elif type(importance) is int:
        importance = float(importance)
    # positional, in the field order of `Memory` (a call with 22 keywords costs twice as much)
    return Memory(
        ident,
        content,
        category or "fact",
        importance,
        _SOURCE_OF[source or "auto"],
        tuple(tags) if tags else (),
        tuple(paths) if paths else (),
        created_at,
        accessed_at,
        decayed_at,
        parse_iso(updated) if updated else None,
        accesses if accesses and accesses > 0 else 0,
        evidence,
        bool(tenured),
        user,
        _STATUS_OF[status or "active"],
        tuple(supersedes) if supersedes else (),
        by,
        parse_iso(superseded_at) if superseded_at else None,
        tuple(float(x) for x in embedding) if embedding is not None else None,
        version,
        extra or NO_EXTRA,
    )


def _decode(r: EntryReader) -> Memory:
    rec = r.record
    ident = r.opt_str("id")
    if not ident:
        r.fail("has no 'id'")
    status = r.opt_str("status") or "active"
    if status not in _STATUSES:
        r.fail(f"has an unknown status {status!r}")
    source = r.opt_str("source") or "auto"
    if source not in _SOURCES:
        r.fail(f"has an unknown source {source!r}")
    extra = rec.get("extra") or {}
    if not isinstance(extra, dict):
        r.wrong("extra", "an object")
    return Memory(
        id=ident,
        content=r.content(),
        category=r.opt_str("category") or "fact",
        importance=min(1.0, max(0.0, r.number("importance", 0.8))),
        source=Source(source),
        tags=r.str_list("tags"),
        paths=r.str_list("paths"),
        created_at=r.iso_time("created_at"),
        last_accessed_at=r.iso_time("last_accessed_at"),
        last_decayed_at=r.iso_time("last_decayed_at"),
        updated_at=r.iso_time("updated_at"),
        access_count=max(0, r.opt_int("access_count") or 0),
        evidence_count=r.opt_int("evidence_count"),
        tenured=r.flag("tenured"),
        user_id=r.opt_str("user_id"),
        status=Status(status),
        supersedes=r.id_list("supersedes"),
        superseded_by=r.opt_str("superseded_by"),
        superseded_at=r.iso_time("superseded_at"),
        embedding=r.vector("embedding"),
        version=r.opt_int("version"),
        extra=extra,
    )
