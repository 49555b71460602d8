"""The Go long-term memory's `Item` / `MemoryRecord` JSON, as JSON Lines or a JSON array.

Go writes zero times as `0001-01-01T00:00:00Z`; they read as "unset" and are written back as
they were. Statuses Go cannot express (archived, merged, deprecated, proposed) are kept in an
extra key `memtui_status`, which Go ignores; memtui's decay anchor in `last_decayed_at`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import StoreFormatError
from memtui.jsonout import dumps, dumps_text
from memtui.model import NO_EXTRA, Memory, Source, Status
from memtui.stores.formats.document import Document, FormatDefaults
from memtui.stores.formats.fields import (
    MAX_CONTENT_CHARS,
    NUMBERS,
    OPT_BOOL,
    OPT_INT,
    OPT_LIST,
    OPT_NUM,
    OPT_STR,
    EntryReader,
    Share,
    json_problem,
    new_share,
)
from memtui.stores.formats.records import Records
from memtui.times import GO_ZERO_TIME, format_iso, parse_iso
from memtui.traits import FormatTraits, IdStyle

_MEMTUI_ONLY_STATUSES = frozenset(
    {Status.ARCHIVED, Status.MERGED, Status.DEPRECATED, Status.PROPOSED}
)
_KNOWN = frozenset(
    {
        "id",
        "memory_id",
        "content",
        "importance",
        "embedding",
        "created_at",
        "last_accessed",
        "last_decayed_at",
        "updated_at",
        "user_id",
        "category",
        "tags",
        "superseded",
        "superseded_at",
        "supersedes",
        "deleted_at",
        "quarantined",
        "version",
        "access_count",
        "source",
        "memtui_status",
    }
)


class LongtermFormat(FormatDefaults):
    name = "longterm"
    traits = FormatTraits(
        ids=IdStyle(numbered=True), default_profile="longterm", export_as="longterm-jsonl"
    )
    file_mode = 0o644

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        if isinstance(value, list):
            doc = self.parse((value, "array"), path)
            doc.header["indent"] = b"\n " in data[:4096]
            return doc
        if (
            isinstance(value, dict)
            and "content" in value
            and ("id" in value or "memory_id" in value)
        ):
            doc = self.parse(([value], "jsonl"), path)  # JSON Lines of one record
            _keep_lines(doc, [data.strip()])
            return doc
        return None

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        lines = _json_lines(data, path)
        if lines is None:
            return None
        doc = self.parse(([r for r, _ in lines], "jsonl"), path)
        _keep_lines(doc, [line for _, line in lines])
        return doc

    def parse(self, value: Any, path: Path) -> Document:
        """`value` is the list of records (from JSON Lines or a JSON array)."""
        records, layout = value
        memories: dict[str, Memory] = {}
        raws = Records()
        pack = raws.setter()
        where = "line {}" if layout == "jsonl" else "record [{}]"
        first = 1 if layout == "jsonl" else 0
        share = new_share()
        for index, record in enumerate(records, start=first):
            memory = _read(record, path, where, index, share)
            if memory.id in memories:
                raise StoreFormatError(f"{path}: {where.format(index)} repeats the id {memory.id}")
            memories[memory.id] = memory
            pack(memory.id, record)
        successors: dict[str, str] = {}
        for memory in memories.values():
            for old in memory.supersedes:
                successors[old] = memory.id
        for old, new in successors.items():
            if old in memories:
                memories[old] = memories[old].with_(superseded_by=new)
        return Document(memories, raws, {"layout": layout})

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        return _read(raw, path, "entry", 0)

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        out: dict[str, Any] = dict(base) if base else {}
        for key in [k for k in out if k not in _KNOWN and k not in memory.extra]:
            del out[key]
        id_key = "memory_id" if "memory_id" in out else "id"
        out[id_key] = _go_id(memory.id, out.get(id_key))
        out["content"] = memory.content
        out["importance"] = memory.importance
        if memory.embedding is not None or "embedding" in out:
            out["embedding"] = list(memory.embedding) if memory.embedding is not None else None
        _put_time(out, "created_at", memory.created_at, always=True)
        _put_time(out, "last_accessed", memory.last_accessed_at, always=True)
        _put_time(out, "last_decayed_at", memory.last_decayed_at, always=False)
        _put_optional(out, "user_id", memory.user_id)
        out["category"] = memory.category
        if memory.tags or "tags" in out:
            out["tags"] = list(memory.tags)
        status = memory.status
        _put_flag(out, "superseded", status in (Status.SUPERSEDED, Status.MERGED))
        superseded_at = memory.superseded_at
        if superseded_at is None and status in (Status.SUPERSEDED, Status.MERGED):
            superseded_at = memory.updated_at
        _put_time(out, "superseded_at", superseded_at, always=True)
        if memory.supersedes or "supersedes" in out:
            was = {str(x): x for x in out.get("supersedes") or () if type(x) in ID_TYPES}
            out["supersedes"] = [_go_id(x, was.get(x)) for x in memory.supersedes]
        if status is Status.DELETED:
            if parse_iso(out.get("deleted_at")) is None:
                out["deleted_at"] = format_iso(memory.updated_at) or GO_ZERO_TIME
        else:
            out.pop("deleted_at", None)
        _put_flag(out, "quarantined", status is Status.QUARANTINED)
        if status in _MEMTUI_ONLY_STATUSES:
            out["memtui_status"] = status.value
        else:
            out.pop("memtui_status", None)
        _put_optional(out, "version", memory.version)
        _put_time(out, "updated_at", memory.updated_at, always=True)
        if memory.access_count or "access_count" in out:
            out["access_count"] = memory.access_count
        if memory.source is not Source.AUTO or "source" in out:
            out["source"] = memory.source.value
        out.update(memory.extra)
        return out

    def successor(self, raw: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
        """The record to write over `current`: the Go system's optimistic `version` moves
        forward on every change memtui makes (undo and rollback included), never back."""
        if current is None or raw == current:
            return raw
        now_at = current.get("version")
        if type(now_at) is not int:
            return raw
        wanted = raw.get("version")
        wanted = wanted if type(wanted) is int else 0
        return {**raw, "version": max(wanted, now_at + 1)}

    def record_image(self, image: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        """The record itself: the ledger keeps it so undo writes it back byte for byte."""
        return raw

    def render(self, doc: Document, now: datetime | None) -> bytes:
        records = [doc.raws[ident] for ident in doc.memories]
        if doc.header.get("layout") == "array":
            return dumps(records, indent=bool(doc.header.get("indent"))) + b"\n"
        # lines of entries memtui did not change are written back byte for byte
        lines: dict[str, bytes] = doc.header.get("lines", {})
        read: Records = doc.header.get("read") or Records()
        # match the file's own style: Go writes compact JSON, Python's json.dumps spaced JSON
        first = next(iter(lines.values()), b"")
        spaced = b'", "' in first or b'": ' in first
        out = []
        for ident, record in zip(doc.memories, records, strict=True):
            line = lines.get(ident, b"")
            if not doc.raws.same_as(read, ident):
                line = line[: len(line) - len(line.lstrip())] + _dump_line(record, spaced)
            out.append(line + b"\n")
        return b"".join(out)

    def export_header(self, source: dict[str, Any] | None, now: datetime) -> dict[str, Any]:
        """Exports are JSON Lines (a JSON Lines source keeps its lines byte for byte)."""
        return dict(source) if source and source.get("layout") == "jsonl" else {"layout": "jsonl"}


def _read(record: Any, path: Path, where: str, index: int, share: Share | None = None) -> Memory:
    try:
        return _build(record, share or new_share())
    except (TypeError, ValueError, OverflowError, KeyError, AttributeError):
        return _decode(EntryReader(path, where.format(index), record))


def _build(rec: dict[str, Any], share: Share) -> Memory:
    """The fast path for well-formed records; anything unexpected raises and `_decode` then
    reads the record field by field and names the problem. Repeated strings (categories,
    users, sources, equal times) become one object in the record and the entry."""
    get = rec.get
    ident = get("id")
    if ident is None:
        ident = rec["memory_id"]
    content, category, importance, user = (
        rec["content"],
        get("category"),
        get("importance"),
        get("user_id"),
    )
    accesses, version, source = get("access_count"), get("version"), get("source")
    tags, supersedes, embedding = get("tags"), get("supersedes"), get("embedding")
    superseded, quarantined, marked = get("superseded"), get("quarantined"), get("memtui_status")
    if not (
        type(ident) in ID_TYPES
        and ident != ""
        and type(content) is str
        and len(content) <= MAX_CONTENT_CHARS
        and type(category) in OPT_STR
        and type(importance) in OPT_NUM
        and type(user) in OPT_STR
        and type(source) in OPT_STR
        and type(marked) in OPT_STR
        and type(accesses) in OPT_INT
        and type(version) in OPT_INT
        and type(superseded) in OPT_BOOL
        and type(quarantined) in OPT_BOOL
        and type(tags) in OPT_LIST
        and type(supersedes) in OPT_LIST
        and (not tags or all(type(t) is str for t in tags))
        and (not supersedes or all(type(i) in ID_TYPES for i in supersedes))
        and (embedding is None or all(type(x) in NUMBERS for x in embedding))
    ):
        raise ValueError("wrong type")
    status = Status.SUPERSEDED if superseded else Status.ACTIVE
    if marked in _MEMTUI_ONLY_STATUSES:
        status = Status(marked)
    if quarantined:
        status = Status.QUARANTINED
    if parse_iso(get("deleted_at")) is not None:
        status = Status.DELETED
    if category:
        rec["category"] = category = share(category, category)
    if user is not None:
        rec["user_id"] = user = share(user, user)
    if source:
        rec["source"] = source = share(source, source)
    created, accessed, decayed = get("created_at"), get("last_accessed"), get("last_decayed_at")
    created_at = parse_iso(created)
    if type(accessed) is str and accessed == created:
        rec["last_accessed"] = accessed = created
        accessed_at = created_at
    else:
        accessed_at = parse_iso(accessed)
    if type(decayed) is str and decayed == accessed:
        rec["last_decayed_at"] = accessed
        decayed_at = accessed_at
    else:
        decayed_at = parse_iso(decayed)
    updated, superseded_at = get("updated_at"), get("superseded_at")
    if updated == GO_ZERO_TIME:  # Go writes its zero time for "unset": one string for all
        rec["updated_at"] = updated = GO_ZERO_TIME
    if superseded_at == GO_ZERO_TIME:
        rec["superseded_at"] = superseded_at = GO_ZERO_TIME
    extra = {k: rec[k] for k in rec if k not in _KNOWN}  # in the file's order
    # positional, in the field order of `Memory` (a call with keywords costs twice as much)
    return Memory(
        str(ident),
        content,
        category or "general",
        0.5 if importance is None else min(1.0, max(0.0, float(importance))),
        _SOURCES.get(source, Source.AUTO),  # type: ignore[arg-type]
        tuple(tags) if tags else (),
        (),
        created_at,
        accessed_at,
        decayed_at,
        parse_iso(updated),
        max(0, accesses or 0),
        None,
        False,
        user,
        status,
        tuple(str(i) for i in supersedes) if supersedes else (),
        None,
        parse_iso(superseded_at),
        tuple(float(x) for x in embedding) if embedding is not None else None,
        version,
        extra or NO_EXTRA,
    )


_SOURCES = {s.value: s for s in Source}
ID_TYPES = (int, str)


def _decode(r: EntryReader) -> Memory:
    rec = r.record
    key = "id" if "id" in rec else "memory_id"
    ident = rec.get(key)
    if isinstance(ident, bool) or not isinstance(ident, int | str) or ident == "":
        if key not in rec:
            r.fail("has neither 'id' nor 'memory_id'")
        r.wrong(key, "an integer or string id")
    source = r.opt_str("source")
    status = Status.SUPERSEDED if r.flag("superseded") else Status.ACTIVE
    marked = r.opt_str("memtui_status")
    if marked in _MEMTUI_ONLY_STATUSES and status in (Status.ACTIVE, Status.SUPERSEDED):
        status = Status(marked)
    if r.flag("quarantined"):
        status = Status.QUARANTINED
    if r.iso_time("deleted_at") is not None:
        status = Status.DELETED
    return Memory(
        id=str(ident),
        content=r.content(),
        category=r.opt_str("category") or "general",
        importance=min(1.0, max(0.0, r.number("importance", 0.5))),
        source=Source(source) if source in ("auto", "manual", "user") else Source.AUTO,
        tags=r.str_list("tags"),
        created_at=r.iso_time("created_at"),
        last_accessed_at=r.iso_time("last_accessed"),
        last_decayed_at=r.iso_time("last_decayed_at"),
        updated_at=r.iso_time("updated_at"),
        access_count=max(0, r.opt_int("access_count") or 0),
        user_id=r.opt_str("user_id"),
        status=status,
        supersedes=r.id_list("supersedes"),
        superseded_at=r.iso_time("superseded_at"),
        embedding=r.vector("embedding"),
        version=r.opt_int("version"),
        extra={k: v for k, v in rec.items() if k not in _KNOWN},
    )


def _dump_line(record: dict[str, Any], spaced: bool) -> bytes:
    if spaced:
        return dumps_text(record, spaced=True).encode("utf-8", "surrogatepass")
    return dumps(record)


def _go_id(ident: str, was: Any = None) -> int | str:
    """The id as the file spells it (`"007"`, `"42"` and `42` stay as they were); a new one
    is a number when it is one in canonical ASCII digits."""
    if type(was) in ID_TYPES and str(was) == ident:
        return was  # type: ignore[no-any-return]
    if ident.isascii() and ident.isdigit() and str(int(ident)) == ident:
        return int(ident)
    return ident


def _put_time(out: dict[str, Any], key: str, when: datetime | None, *, always: bool) -> None:
    """Keep the file's own spelling when the time is unchanged (nanoseconds, offsets)."""
    old = out.get(key)
    if isinstance(old, str):
        try:
            if parse_iso(old) == when:
                return
        except ValueError:
            pass
    if when is not None:
        out[key] = format_iso(when)
    elif always or key in out:
        out[key] = GO_ZERO_TIME
    else:
        out.pop(key, None)


def _put_flag(out: dict[str, Any], key: str, value: bool) -> None:
    if value or key in out:
        out[key] = value


def _put_optional(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None:
        out[key] = value
    else:
        out.pop(key, None)


def _json_lines(data: bytes, path: Path) -> list[tuple[Any, bytes]] | None:
    """Records of a JSON Lines file with their lines, or None when it is not JSON Lines (its
    first record is not a JSON object, or there is only one line)."""
    records: list[tuple[Any, bytes]] = []
    loads = orjson.loads
    gap = b""  # blank lines before a record stay with it
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line or line.isspace():
            gap += line.rstrip(b"\r") + b"\n"
            continue
        try:
            records.append((loads(line), gap + line.rstrip(b"\r")))
            gap = b""
        except orjson.JSONDecodeError as e:
            if not records:
                return None
            problem = json_problem(line, e).replace(f"at line {e.lineno}, column", "at column")
            raise StoreFormatError(f"{path}: line {number}: {problem}") from None
        if len(records) == 1 and type(records[0][0]) is not dict:
            return None
    return records if len(records) >= 2 else None


def _keep_lines(doc: Document, lines: list[bytes]) -> None:
    """A JSON Lines file's lines by entry, and its records as read (the same packed records:
    no more memory), so that the lines of entries memtui did not change are written back as
    they were."""
    doc.header["lines"] = dict(zip(doc.memories, lines, strict=True))
    doc.header["read"] = doc.raws.copy()
