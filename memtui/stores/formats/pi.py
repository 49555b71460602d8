"""The pi agent's `memory-store.json` (field by field: docs/formats.md, `pi`).

Entries are read with pi's own defaults; entries memtui does not change are written back as
they were, and the file keeps pi's layout: 2-space indented JSON, mode 0600.
"""

from __future__ import annotations

import hashlib
import math
from datetime import datetime
from pathlib import Path
from typing import Any, TypeGuard

from memtui.errors import StoreFormatError
from memtui.model import NO_EXTRA, Memory, Source, Status
from memtui.stores.formats.document import Document, FormatDefaults, HeaderImages
from memtui.stores.formats.fields import MAX_CONTENT_CHARS, Share, json_type_name, new_share
from memtui.stores.formats.pi_json import PiJsonError, read_checked
from memtui.stores.formats.pi_json import dumps as pi_dumps
from memtui.stores.formats.pi_splice import in_pi_layout, spliced
from memtui.stores.formats.records import Records
from memtui.times import from_epoch_ms, to_epoch_ms
from memtui.traits import FormatTraits, HandRules, IdStyle

PI_TYPES = frozenset({"decision", "convention", "pattern", "preference", "fact", "lesson"})
# Content longer than this is refused by pi on add and update.
PI_CONTENT_CAP = 500
_KNOWN = frozenset(
    {
        "id",
        "type",
        "content",
        "paths",
        "potency",
        "source",
        "tags",
        "createdAt",
        "lastInjectedAt",
        "lastDecayedAt",
        "accessCount",
        "tenured",
        "evidenceCount",
        "userId",
    }
)


class PiFormat(FormatDefaults):
    name = "pi"
    traits = FormatTraits(
        content_cap=PI_CONTENT_CAP,
        keeps=frozenset({Status.ACTIVE}),
        categories=PI_TYPES,
        ids=IdStyle("mem_", "base36", 8),
        default_profile="pi",
        export_as="pi",
        lineage_in_store=False,
        folds_across_users=True,
        # pi's hand-add paths write "manual" (its consolidator never merges "user" entries);
        # its add() trims and always writes lastDecayedAt, its update() trims
        hand=HandRules(Source.MANUAL, trims=True, anchors_decay=True),
    )
    file_mode = 0o600
    rewrite_mode: int | None = 0o600  # pi insists on it

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        return self.parse(value, path) if isinstance(value, dict) and "memories" in value else None

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        """A file only JavaScript reads (a lone surrogate, a number beyond a double's range)."""
        try:
            value = read_checked(data)
        except PiJsonError:
            return None
        if isinstance(value, dict) and isinstance(value.get("memories"), list):
            return self.parse(value, path)
        return None

    def parse(self, value: Any, path: Path) -> Document:
        if not isinstance(value, dict):
            raise StoreFormatError(f"{path}: not a pi store (top level is not an object)")
        entries = value.get("memories")
        if not isinstance(entries, list):
            got = json_type_name(entries) if "memories" in value else "missing"
            raise StoreFormatError(f"{path}: 'memories' must be a list, got {got}")
        memories: dict[str, Memory] = {}
        raws = Records()
        pack = raws.setter()
        normalised: dict[str, str] = {}
        unreadable: list[tuple[int, Any, str]] = []
        share = new_share()
        for index, record in enumerate(entries):
            as_loaded = _as_pi_loads_it(record)
            entry = record if as_loaded else pi_entry(record, None)
            if entry is None:
                unreadable.append((index, record, _why_dropped(record)))
                continue
            if not entry.get("id"):
                # pi would invent a random id on each load; a stable one keeps the ledger usable
                digest = hashlib.sha1(f"{index}:{entry['content']}".encode()).hexdigest()[:8]
                entry["id"] = f"mem_noid_{index}_{digest}"
            ident = entry["id"]
            if ident in memories:
                unreadable.append((index, record, f"repeats the id {ident!r}"))
                continue
            if len(entry["content"]) > MAX_CONTENT_CHARS:
                unreadable.append((index, record, "content too long for memtui"))
                continue
            try:
                memories[ident] = _memory(entry, share)
            except (OverflowError, ValueError):
                unreadable.append((index, record, "holds a time memtui cannot hold"))
                continue
            pack(ident, record)
            changed = [] if as_loaded else _normalised_fields(record, entry)
            if changed:
                normalised[ident] = "read as pi reads it: " + ", ".join(changed)
        # the top level's keys, in the file's order; its records are held once, in `raws`
        top = {k: ([] if k == "memories" else v) for k, v in value.items()}
        header: dict[str, Any] = {"top": top}
        if normalised:
            header["normalised"] = normalised
        if unreadable:
            header["unreadable"] = unreadable
        return Document(memories, raws, header)

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        entry = pi_entry(raw, None)
        if entry is None:
            raise StoreFormatError(f"{path}: entry {_why_dropped(raw)}")
        if not entry.get("id"):
            raise StoreFormatError(f"{path}: entry has no id")
        return _memory(entry)

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.keeps(memory):
            return None
        normal = pi_entry(base, None) if base else None
        out: dict[str, Any] = normal if normal is not None else {}
        for key in [k for k in out if k not in _KNOWN and k not in memory.extra]:
            del out[key]
        out["type"] = memory.category if memory.category in PI_TYPES else "fact"
        out["content"] = memory.content
        out["paths"] = list(memory.paths)
        out["potency"] = memory.importance
        out["source"] = memory.source.value
        out["tags"] = list(memory.tags)
        out.update(memory.extra)
        _set_or_drop(out, "evidenceCount", memory.evidence_count)
        out["id"] = memory.id
        for key, when in (
            ("createdAt", memory.created_at),
            ("lastInjectedAt", memory.last_accessed_at),
            ("lastDecayedAt", memory.last_decayed_at),
        ):
            if when is not None and not (key in out and _same_ms(out[key], when)):
                out[key] = to_epoch_ms(when)
        out["accessCount"] = memory.access_count
        _set_or_drop(out, "tenured", True if memory.tenured else None)
        _set_or_drop(out, "userId", memory.user_id)
        if base is not None and _same_record(out, base):
            return base  # unchanged: written exactly as the file has it
        return _in_pi_order(out, base, memory.extra)

    def header(self, doc: Document) -> dict[str, Any] | None:
        return file_header(doc, None)

    def write_header(
        self, doc: Document, now: datetime, *, added: int, revert: HeaderImages | None
    ) -> None:
        """pi's `updatedAt` is the time of the write, or (undo, rollback) back to what it was;
        entries memtui adds count as pi's own additions (`pi_session_header`)."""
        if revert is not None:
            top = reverted_header(file_header(doc, None), *revert, now)
        else:
            top = file_header(doc, now)
        if added:
            top = pi_session_header(top, now, added)
        doc.header["top"] = with_file_header(doc.header.get("top") or {}, top)

    def render(self, doc: Document, now: datetime | None) -> bytes:
        records: list[Any] = [doc.raws[ident] for ident in doc.memories]
        for index, record, _why in doc.header.get("unreadable", ()):
            records.insert(min(index, len(records)), record)  # kept where it was
        # a file memtui read keeps the header `write_header` set; a new one is written at `now`
        top = {**file_header(doc, None if "top" in doc.header else now), "memories": records}
        # keep the key order the file had
        order = list(doc.header.get("top") or {"version": 1, "updatedAt": 0, "memories": []})
        ordered = {key: top[key] for key in order if key in top}
        ordered.update(top)
        full = pi_dumps(ordered)
        # a file not in pi's layout keeps the bytes of what memtui did not change; whether
        # it is in pi's layout is known after memtui's first write (the flag describes it)
        own = doc.header.get("pi_layout")
        if own is True:
            return full  # the sources (the file replaced, backups) are not read
        sources = [s.replace(b"\r\n", b"\n") for s in doc.header.get("sources", ())]
        if not sources:
            return full
        if own is None:
            own = in_pi_layout(sources[0])
        text = None if own else spliced(sources[0], ordered, records, full, sources[1:])
        doc.header["pi_layout"] = text is None
        return text or full


_SOURCES = {s.value: s for s in Source}
_PI_SOURCES = frozenset(_SOURCES)
_UNDEFINED = object()


def _finite(value: Any) -> TypeGuard[int | float]:
    """JavaScript's `Number.isFinite`: a real, finite number (no strings, no booleans)."""
    return type(value) in (int, float) and math.isfinite(value)


def _floor(value: int | float) -> int | float:
    return value if type(value) is int else float(math.floor(value))


def pi_entry(record: Any, now_ms: int | float | None) -> dict[str, Any] | None:
    """The entry as pi's loader leaves it (its key order included), or None when pi drops it
    (not an object, or content not a string). `now_ms` stands in for invalid `createdAt`
    (pi uses the clock); None leaves such times out, as memtui does not invent them. A
    missing id stays missing (pi generates a random one)."""
    if not isinstance(record, dict) or type(record.get("content")) is not str:
        return None
    get = record.get
    created = get("createdAt") if _finite(get("createdAt")) else now_ms
    injected = get("lastInjectedAt") if _finite(get("lastInjectedAt")) else created
    decayed = get("lastDecayedAt") if _finite(get("lastDecayedAt")) else injected
    potency, accesses, evidence = get("potency"), get("accessCount"), get("evidenceCount")
    ident = get("id")
    fields: dict[str, Any] = {
        "id": ident if type(ident) is str and ident else "",
        "type": get("type") if get("type") in PI_TYPES else "fact",
        "content": record["content"],
        "paths": _strings(get("paths")),
        "potency": max(0, min(1, potency)) if _finite(potency) else 0.8,
        "createdAt": created,
        "lastInjectedAt": injected,
        "lastDecayedAt": decayed,
        "accessCount": max(0, _floor(accesses)) if _finite(accesses) else 0,
        "source": get("source") if get("source") in _PI_SOURCES else "auto",
        "tags": _strings(get("tags")),
        "tenured": True if get("tenured") is True else _UNDEFINED,
        "evidenceCount": max(1, _floor(evidence)) if _finite(evidence) else _UNDEFINED,
    }
    out = {**record, **fields}
    return {
        k: _js_zero(v)
        for k, v in out.items()
        if v is not _UNDEFINED and not (v is None and k in _TIMES)
    }


def _time(value: Any) -> bool:
    """A finite number (`x - x` is not 0 for infinities and NaN)."""
    kind = type(value)
    return kind is int or (kind is float and value - value == 0)


def _only_strings(value: Any) -> bool:
    return type(value) is list and (not value or all(type(v) is str for v in value))


def _as_pi_loads_it(record: Any) -> bool:
    """Whether pi's loader leaves `record` as the file has it (`pi_entry` would return the
    same keys, in the same order, with equal values), so the entry needs no normalising: true
    of every entry pi itself wrote. A cheap test; anything else takes `pi_entry`."""
    if type(record) is not dict:
        return False
    get = record.get
    ident, kind, source = get("id"), get("type"), get("source")
    potency: Any = get("potency")
    accesses: Any = get("accessCount")
    evidence: Any = get("evidenceCount")
    if not (
        type(get("content")) is str
        and type(ident) is str
        and ident
        and type(kind) is str
        and kind in PI_TYPES
        and type(potency) in (int, float)
        and 0 <= potency <= 1  # false for NaN
        and _time(get("createdAt"))
        and _time(get("lastInjectedAt"))
        and _time(get("lastDecayedAt"))
        and type(accesses) is int
        and accesses >= 0
        and type(source) is str
        and source in _PI_SOURCES
        and _only_strings(get("paths"))
        and _only_strings(get("tags"))
        and (get("tenured") is True or "tenured" not in record)
        and (
            (evidence is None and "evidenceCount" not in record)
            or (type(evidence) is int and evidence >= 1)
        )
    ):
        return False
    # pi's loader writes float zeros as 0; NaN is never equal to itself
    return not any(
        type(record[k]) is float and (record[k] == 0 or record[k] != record[k])
        for k in record.keys() - _KNOWN
    )


def _strings(value: Any) -> list[str]:
    """pi keeps the strings of a list and nothing of anything else."""
    return [v for v in value if type(v) is str] if type(value) is list else []


def _js_zero(value: Any) -> Any:
    return 0 if type(value) is float and value == 0 else value


_TIMES = ("createdAt", "lastInjectedAt", "lastDecayedAt")
# where pi's loader puts the keys an entry lacked (even those it leaves undefined: a later
# assignment fills that slot), and the order of an entry pi's `add` creates
_LOAD_SLOTS: tuple[str, ...] = (
    "id",
    "type",
    "content",
    "paths",
    "potency",
    *_TIMES,
    "accessCount",
    "source",
)
_LOAD_SLOTS += ("tags", "tenured", "evidenceCount")
_ADD_HEAD = ("type", "content", "paths", "potency", "source", "tags")
_ADD_TAIL = ("id", *_TIMES, "accessCount", "tenured", "evidenceCount")


def _in_pi_order(
    out: dict[str, Any], base: dict[str, Any] | None, extra: dict[str, Any]
) -> dict[str, Any]:
    """`out` with its keys where pi would have them: an entry read from the file keeps the
    file's order, then pi's load slots, then new keys in the order they were set; a new entry
    is in the order pi's `add` writes."""
    if base is not None:
        slots = [*base, *(k for k in _LOAD_SLOTS if k not in base)]
    else:
        slots = [*_ADD_HEAD, *(k for k in extra if k not in _ADD_TAIL), *_ADD_TAIL]
    ordered = {k: out[k] for k in slots if k in out}
    ordered.update(out)
    return ordered


def _memory(entry: dict[str, Any], share: Share | None = None) -> Memory:
    """A Memory from an entry as pi's loader leaves it (see `pi_entry`); one read's repeated
    strings (types, sources, users) become one object in the entry and the Memory."""
    get = entry.get
    user, created, injected, decayed = (
        get("userId"), get("createdAt"), get("lastInjectedAt"), get("lastDecayedAt")
    )  # fmt: skip
    share = share or new_share()
    category, source = share(entry["type"], entry["type"]), entry["source"]
    entry["type"] = category
    if type(user) is str:
        entry["userId"] = user = share(user, user)
    else:
        user = None
    # pi often sets all three times to the creation time: convert each value once
    created_at = None if created is None else from_epoch_ms(created)
    injected_at = created_at if injected == created else _when(injected)
    decayed_at = injected_at if decayed == injected else _when(decayed)
    extra = [k for k in entry if k not in _KNOWN]  # in the file's order, not a set's
    # positional, in the field order of `Memory` (a call with keywords costs twice as much)
    return Memory(
        entry["id"],
        entry["content"],
        category,
        float(entry["potency"]),
        _SOURCES[source],
        tuple(entry["tags"]),
        tuple(entry["paths"]),
        created_at,
        injected_at,
        decayed_at,
        None,
        int(entry["accessCount"]),
        int(entry["evidenceCount"]) if "evidenceCount" in entry else None,
        entry.get("tenured") is True,
        user,
        Status.ACTIVE,
        (),
        None,
        None,
        None,
        None,
        {k: entry[k] for k in extra} if extra else NO_EXTRA,
    )


def _when(ms: int | float | None) -> datetime | None:
    return None if ms is None else from_epoch_ms(ms)


def _normalised_fields(record: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    """The fields pi's loader reads differently from what the file says."""
    keys = dict.fromkeys([*record, *entry])
    return [
        k
        for k in keys
        if k != "id" and not _same_json(record.get(k, _UNDEFINED), entry.get(k, _UNDEFINED))
    ] + (["id"] if not (type(record.get("id")) is str and record.get("id")) else [])


def _same_json(a: Any, b: Any) -> bool:
    if type(a) in (int, float) and type(b) in (int, float):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _same_record(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return list(a) == list(b) and all(_same_json(a[k], b[k]) for k in a)


def _why_dropped(record: Any) -> str:
    if not isinstance(record, dict):
        return f"is {json_type_name(record)}, not an entry; pi skips it"
    if "content" not in record:
        return "has no content; pi skips it"
    return f"has content that is {json_type_name(record['content'])}, not text; pi skips it"


def file_header(doc: Document, now: datetime | None) -> dict[str, Any]:
    """pi's top-level keys but `memories`, as the next write leaves them (`updatedAt` is the
    time of the write, unless `now` is None)."""
    top = doc.header.get("top") or {"version": 1, "updatedAt": 0}
    header = {k: v for k, v in top.items() if k != "memories"}
    header["version"] = 1
    if now is not None:
        header["updatedAt"] = to_epoch_ms(now)
    return header


def with_file_header(top: dict[str, Any], header: dict[str, Any]) -> dict[str, Any]:
    """`top` with its keys but `memories` replaced by `header`, in the file's key order."""
    out = {k: ([] if k == "memories" else header[k]) for k in top if k == "memories" or k in header}
    out.update({k: v for k, v in header.items() if k not in out})
    out.setdefault("memories", [])
    return out


_ABSENT = object()


def reverted_header(
    current: dict[str, Any],
    before: dict[str, Any],
    after: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """pi's top-level keys for a write that reverts memtui's own change `before` → `after`
    (undo, rollback) on top of the file as it is now (`current`).

    Only keys memtui itself changed are reverted, and only while they still hold memtui's
    value: what the agent wrote since (its quotas, `resolvedSources`, `adaptation`) stays.
    `updatedAt` goes back only when nobody wrote since; otherwise it is the time of this write
    (or the agent's, if its clock is ahead).
    """
    out = dict(current)
    reverted_stamp = False
    for key in dict.fromkeys([*before, *after]):
        was, memtui_wrote = before.get(key, _ABSENT), after.get(key, _ABSENT)
        if was == memtui_wrote or current.get(key, _ABSENT) != memtui_wrote:
            continue
        if was is _ABSENT:
            out.pop(key, None)
        else:
            out[key] = was
        reverted_stamp |= key == "updatedAt"
    if not reverted_stamp:
        stamp = current.get("updatedAt")
        known = stamp if isinstance(stamp, int | float) and not isinstance(stamp, bool) else 0
        out["updatedAt"] = max(to_epoch_ms(now), known)  # never back past the agent's write
    out["version"] = 1
    return out


def _same_ms(raw: Any, when: datetime) -> bool:
    return isinstance(raw, int | float) and not isinstance(raw, bool) and from_epoch_ms(raw) == when


def _set_or_drop(out: dict[str, Any], key: str, value: Any) -> None:
    if value is None:
        out.pop(key, None)
    else:
        out[key] = value


_ADAPT_WINDOW_MS = 7 * 86_400_000


def pi_session_header(header: dict[str, Any], now: datetime, added: int) -> dict[str, Any]:
    """pi's top-level bookkeeping for a session start and a consolidation that added `added`
    entries: an `adaptation` window of seven days or more restarts at now (pi tunes its
    in-memory decay factor then, which a fresh process never keeps), and each new entry
    counts towards the day's `dailyAddedCount` (a new UTC day restarts the count)."""
    out = dict(header)
    now_ms = to_epoch_ms(now)
    window = out.get("adaptation")
    start = window.get("windowStart") if isinstance(window, dict) else None
    if _finite(start) and now_ms - start >= _ADAPT_WINDOW_MS:
        out["adaptation"] = {
            "windowStart": now_ms,
            "injections": 0,
            "recallHits": 0,
            "lastAdaptedAt": now_ms,
        }
    if added:
        today = now.strftime("%Y-%m-%d")
        count = out.get("dailyAddedCount")
        if out.get("dailyAddedDate") != today:
            out["dailyAddedDate"], count = today, 0
        out["dailyAddedCount"] = (count if _finite(count) else 0) + added
    return out
