"""Hermes Agent's `memories` folder (`$HERMES_HOME/memories/`, `~/.hermes/memories/` by
default) as one store: `MEMORY.md` (user `memory`, the agent's notes) and `USER.md` (user
`user`, what it knows about the user), both changed in one all-or-nothing transaction
(`folder_tx`) under Hermes' own locks on both files.

Each file is read and written exactly as `hermes_format` reads and writes one (Hermes'
parser, its layout, its caps, its drift guard); this module only puts the two together: the
folder as one value (`folder_tx.pack`), the two users, and the ids and times memtui keeps in the
folder's ledger (`memories.memtui/`), found again by each entry's text as for one file.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError, StoreFormatError, StoreLockedError
from memtui.model import Memory, Status
from memtui.stores.file import folder_tx
from memtui.stores.file.files import real_path, store_lock
from memtui.stores.formats import hermes as hermes_format
from memtui.stores.formats.document import Document
from memtui.stores.formats.records import Records
from memtui.stores.ledger import SidecarLedger
from memtui.times import format_iso, parse_iso_or_none
from memtui.traits import FormatTraits, IdStyle

KIND = "hermes"
FILES = {"memory": "MEMORY.md", "user": "USER.md"}
PATTERNS = tuple(FILES.values())


@dataclass(frozen=True, slots=True)
class HermesFolderTraits:
    """What else differs about this format (beside its FormatTraits)."""

    users: tuple[str, ...] = ("memory", "user")  # one file each
    categories: tuple[str, ...] = ("fact", "identity")  # by user: no category of its own
    caps: tuple[tuple[str, int], ...] = (("memory", 2200), ("user", 1375))
    multi_file: bool = True
    keeps_metadata: bool = False  # ids and times only in memtui's ledger


TRAITS = HermesFolderTraits()


class HermesFolderFormat(hermes_format.HermesFormat):
    name = "hermes-folder"
    # two users, one file each; entries are text only
    traits = FormatTraits(
        keeps=frozenset({Status.ACTIVE}),
        ids=IdStyle("n", "none", 8),
        lineage_in_store=False,
        holds_importance=False,
        plan_notes=True,
    )

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        files = folder_tx.unpack(value, KIND)
        return None if files is None else self.parse(files, path)

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        return None

    def parse(self, value: Any, path: Path) -> Document:
        files: dict[str, str] = value
        written = _written_by_memtui(path)
        memories: dict[str, Memory] = {}
        raws = Records()
        header: dict[str, Any] = {"files": {}, "layout_bytes": None}
        for target, name in FILES.items():
            if name not in files:
                continue
            text = hermes_format._universal_newlines(files[name])
            pieces = [p.strip() for p in text.split(hermes_format.DELIMITER)]
            entries = list(dict.fromkeys(p for p in pieces if p))
            records = hermes_format._records(entries, written.get(target, {}))
            for ident, raw in records.items():
                if ident in raws:  # the same text in both files: the second gets its own id
                    ident = f"{ident}-{target}"
                raw = {**raw, "id": ident, "target": target}
                raws[ident] = raw
                memories[ident] = self.decode(raw, path)
            drift = hermes_format._drift(text, [p for p in pieces if p])
            header.setdefault("findings", []).extend(hermes_format.fence_findings(name, text))
            header["files"][target] = {
                "chars": hermes_format._chars(entries),
                "drift": None if drift is None else f"{path / name}: {drift}",
                "entries": entries,
            }
        return Document(memories, raws, header)

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        target = str(raw.get("target", "memory"))
        return Memory(
            id=raw["id"],
            content=raw["content"],
            category=hermes_format.CATEGORIES[target],
            user_id=target,
            created_at=parse_iso_or_none(raw.get("created")),
            updated_at=parse_iso_or_none(raw.get("updated")),
        )

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.keeps(memory):
            return None
        target = memory.user_id if memory.user_id in FILES else None
        if target is None:
            raise MemtuiError(
                f"{memory.id}: a Hermes memories folder has two users, memory (MEMORY.md) and "
                f"user (USER.md), not {memory.user_id or 'none'}; say whose it is (a user of "
                "its own); nothing was written"
            )
        out: dict[str, Any] = {
            "id": memory.id,
            "content": hermes_format._as_hermes_reads(memory.content),
            "target": target,
        }
        for key, when in (("created", memory.created_at), ("updated", memory.updated_at)):
            if when is not None:
                out[key] = format_iso(when)
        return base if base == out else out

    def render(self, doc: Document, now: datetime | None) -> bytes:
        read = doc.header.get("files", {})
        out: dict[str, str] = {}
        sources = [folder_tx.unpack(_loads(s), KIND) or {} for s in doc.header.get("sources", ())]
        for target, name in FILES.items():
            entries = [
                str(doc.raws[i]["content"])
                for i in doc.memories
                if doc.raws[i].get("target") == target
            ]
            before = read.get(target)
            if before is None and not entries:
                continue  # a file Hermes has not made yet stays unmade
            if before is not None and before["entries"] == entries:
                # unchanged: the file as it is, byte for byte (its layout is Hermes' or the agent's)
                kept = next((s[name] for s in sources if name in s), None)
                if kept is not None:
                    out[name] = kept
                    continue
            held = next((s[name] for s in sources if name in s and _same(s[name], entries)), None)
            if held is not None:  # an undo: the file as it was
                out[name] = held
                continue
            if before is not None and before["drift"]:
                raise MemtuiError(f"{before['drift']}; nothing was written")
            for ident in doc.memories:
                if doc.raws[ident].get("target") == target:
                    _check(name, ident, str(doc.raws[ident]["content"]))
            joined = hermes_format.DELIMITER.join(entries)
            if hermes_format._entries(joined) != entries:
                raise MemtuiError(
                    f"{name}: two entries would hold the same text (Hermes keeps only the "
                    "first); nothing was written"
                )
            cap = hermes_format.CAPS[target]
            had = before["chars"] if before is not None else 0
            if len(joined) > cap and len(joined) >= had:
                raise MemtuiError(
                    f"{name} would hold {len(joined):,} of {cap:,} characters (Hermes' cap, "
                    "counted as Hermes counts: the entries joined by their delimiters); nothing "
                    "was written"
                )
            out[name] = joined
        return folder_tx.pack(KIND, out)

    def plan_notes(self, before: Document, after: Document) -> list[str]:
        read = before.header.get("files", {})
        notes: list[str] = []
        for target, name in FILES.items():
            entries = [
                str(after.raws[i]["content"])
                for i in after.memories
                if after.raws[i].get("target") == target
            ]
            had = read.get(target, {}).get("chars", 0)
            notes += hermes_format.cap_notes(name, target, had, entries)
        return notes

    def write_lock(self, file: Path) -> AbstractContextManager[None]:
        return _locked(file)


def _loads(data: bytes) -> object:
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return None


def _same(text: str, entries: list[str]) -> bool:
    return hermes_format._same_entries(text.encode("utf-8", "surrogatepass"), entries)


def _check(name: str, ident: str, content: str) -> None:
    hermes_format._check_entry(name, ident, content)


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """memtui's own lock (`memories.memtui.lock`), then Hermes' flock on both files' locks, in
    the order Hermes never holds both in (it takes one at a time): no deadlock."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(store_lock(folder.with_name(folder.name + ".memtui")))
        except StoreLockedError:
            raise StoreLockedError(
                f"{folder}: another memtui is writing it; try again when it is done"
            ) from None
        for name in PATTERNS:
            held.enter_context(hermes_format._hermes_flock(folder / name))
        yield


def _written_by_memtui(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """target -> the records memtui last wrote, by their text (as `hermes_format` finds them
    for one file)."""
    sidecar = path.with_name(path.name + ".memtui")
    if path.parent.name == "backups" and path.parent.parent.name.endswith(".memtui"):
        sidecar = path.parent.parent
    ledger = sidecar / "ledger.jsonl"
    if not ledger.is_file():
        return {}
    written: dict[str, dict[str, dict[str, Any]]] = {t: {} for t in FILES}
    for tx in SidecarLedger(ledger).read().transactions:
        if tx.state == "aborted":
            continue
        for change in tx.changes:
            raw = change.after_raw
            if raw is None or not isinstance(raw.get("content"), str) or "id" not in raw:
                continue
            mine = written.setdefault(str(raw.get("target", "memory")), {})
            mine.pop(raw["content"], None)
            mine[raw["content"]] = raw
    return written


def hermes_folder(path: Path) -> Path | None:
    """The Hermes `memories` folder `path` names (a folder holding MEMORY.md or USER.md in
    Hermes' layout), None otherwise."""
    real = real_path(path)
    if not real.is_dir():
        return None
    present = [real / name for name in PATTERNS if (real / name).is_file()]
    if not present:
        return None
    for file in present:
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise StoreFormatError(
                f"{file}: not UTF-8 text; Hermes cannot read it either"
            ) from None
        if file.name == "MEMORY.md" and hermes_format._CLAUDE_INDEX_LINE.search(text):
            return None
    return real
