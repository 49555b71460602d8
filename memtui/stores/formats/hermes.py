"""Hermes Agent's memory files: `$HERMES_HOME/memories/MEMORY.md` (target `memory`, the agent's
notes) and `USER.md` (target `user`, what it knows about the user), one file a store.

Read as Hermes reads them (`tools/memory_tool.py`): UTF-8 with universal newlines, split on
the delimiter `"\\n§\\n"`, each piece stripped, empty pieces dropped, exact duplicates dropped
(the first kept). Written as Hermes writes them: `"\\n§\\n".join(entries)`, LF only, no final
newline, a 0-byte file when empty, under Hermes' own `flock` on `<file>.lock`.

Recognition: Hermes files carry no signature, so an arbitrary text file is never claimed. A file
is a Hermes store when it is not a JSON store memtui knows, is UTF-8 text, and either holds the
delimiter line or is named `MEMORY.md` / `USER.md`. The registry tries this format last: a
format that knows another program's `MEMORY.md` (Claude Code's index) goes before it.

Entries carry no metadata: category `fact` (MEMORY.md) or `identity` (USER.md), user the target.
An entry's id is a hash of its text; an entry memtui wrote keeps the id (and the times) memtui
wrote it with, found again in the store's ledger by its text, so undo works across opens.

Refused before writing (one line, nothing written): a result over Hermes' character cap (unless
the change makes an over-full file smaller), an entry holding the delimiter (it would read back
as two), two entries with the same text, and any write to a file whose layout Hermes' drift guard
refuses (blank lines or spaces around a delimiter, an empty entry, a delimiter at the end).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import re
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError, StoreFormatError, StoreLockedError
from memtui.model import Memory, Status
from memtui.stores.file.files import LOCK_RETRY_S, LOCK_TIMEOUT_S, real_path, store_lock
from memtui.stores.formats.document import Document, FormatDefaults
from memtui.stores.formats.records import Records
from memtui.stores.ledger import SidecarLedger
from memtui.times import format_iso, parse_iso_or_none
from memtui.traits import FormatTraits, IdStyle

DELIMITER = "\n§\n"
_CLAUDE_INDEX_LINE = re.compile(r"^\s*[-*] \[[^\]\n]*\]\([^)\n]+\.md\)", re.MULTILINE)
FILE_TARGETS = {"MEMORY.md": "memory", "USER.md": "user"}
# Hermes' default caps (`memory.memory_char_limit` / `user_char_limit` in its config.yaml)
CAPS = {"memory": 2200, "user": 1375}
CATEGORIES = {"memory": "fact", "user": "identity"}
# a memory file this large is no Hermes memory (its cap is a few thousand characters)
MAX_FILE_BYTES = 1 << 20
# how long a write waits for Hermes to release its lock
HERMES_LOCK_WAIT_S = LOCK_TIMEOUT_S


class HermesFormat(FormatDefaults):
    name = "hermes"
    # entries are text only: the file holds active ones, its name says whose they are
    traits = FormatTraits(
        keeps=frozenset({Status.ACTIVE}),
        ids=IdStyle("n", "none", 8),
        has_users=False,
        lineage_in_store=False,
        holds_importance=False,
        plan_notes=True,
    )
    file_mode = 0o600

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        """A MEMORY.md or USER.md whose text happens to be one JSON value (`42`, `"note"`)."""
        return self.recognise_text(data, path) if _named(path) else None

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        named = _named(path)
        if not named and "§".encode() not in data:
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            if not named:
                return None
            raise StoreFormatError(
                f"{path}: not valid UTF-8 (byte 0x{data[e.start]:02X} at offset {e.start}); "
                "Hermes cannot read it either"
            ) from None
        text = _universal_newlines(text)
        if not named and DELIMITER not in text:
            return None
        if DELIMITER not in text and _CLAUDE_INDEX_LINE.search(text):
            raise StoreFormatError(
                f"{path}: a Claude Code memory index (lines of links to memory files), not "
                "Hermes' notes; open the folder it indexes (memtui FOLDER)"
            )
        if len(data) > MAX_FILE_BYTES:
            raise StoreFormatError(
                f"{path}: {len(data):,} bytes, far more than a Hermes memory file holds (its cap "
                f"is {CAPS[_target(path)]:,} characters); memtui does not open it"
            )
        return self.parse(text, path)

    def parse(self, value: Any, path: Path) -> Document:
        """`value` is the file's text, newlines already universal."""
        text: str = value
        target = _target(path)
        pieces = [p.strip() for p in text.split(DELIMITER)]
        entries = list(dict.fromkeys(p for p in pieces if p))
        raws = _records(entries, _written_by_memtui(path))
        memories = {ident: self.decode(raw, path) for ident, raw in raws.items()}
        header: dict[str, Any] = {
            "target": target,
            "name": real_path(path).name,
            "chars": _chars(entries),
            "layout_bytes": None,  # written in Hermes' own layout, never the file's
        }
        drift = _drift(text, [p for p in pieces if p])
        if drift is not None:
            header["drift"] = f"{path}: {drift}"
        header["findings"] = fence_findings(header["name"], text)
        return Document(memories, Records(raws), header)

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        target = _target(path)
        return Memory(
            id=raw["id"],
            content=raw["content"],
            category=CATEGORIES[target],
            user_id=target,
            created_at=parse_iso_or_none(raw.get("created")),
            updated_at=parse_iso_or_none(raw.get("updated")),
        )

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.keeps(memory):
            return None
        out: dict[str, Any] = {"id": memory.id, "content": _as_hermes_reads(memory.content)}
        for key, when in (("created", memory.created_at), ("updated", memory.updated_at)):
            if when is not None:
                out[key] = format_iso(when)
        return base if base == out else out

    def render(self, doc: Document, now: datetime | None) -> bytes:
        drift = doc.header.get("drift")
        if drift:
            raise MemtuiError(f"{drift}; nothing was written")
        name = doc.header.get("name") or _NAMES[doc.header.get("target", "memory")]
        entries = [doc.raws[ident]["content"] for ident in doc.memories]
        for ident, content in zip(doc.memories, entries, strict=True):
            _check_entry(name, ident, content)
        joined = DELIMITER.join(entries)
        if _entries(joined) != entries:
            raise MemtuiError(
                f"{name}: two entries would hold the same text (Hermes keeps only the first); "
                "nothing was written"
            )
        # an undo, or a change no entry's text takes part in, gives back the file's own bytes
        # (even over the cap: it held them)
        for source in doc.header.get("sources", ()):
            if _same_entries(source, entries):
                return bytes(source)
        target = doc.header.get("target", "memory")
        cap, now_chars, chars = CAPS[target], doc.header.get("chars", 0), len(joined)
        if chars > cap and chars >= now_chars:
            raise MemtuiError(
                f"{name} would hold {chars:,} of {cap:,} characters (Hermes' cap, counted as "
                "Hermes counts: the entries joined by their delimiters); nothing was written"
            )
        try:
            return joined.encode("utf-8")
        except UnicodeEncodeError:
            raise MemtuiError(
                f"{name}: an entry holds a character UTF-8 cannot encode (a lone surrogate); "
                "nothing was written"
            ) from None

    def plan_notes(self, before: Document, after: Document) -> list[str]:
        target = before.header.get("target", "memory")
        name = before.header.get("name") or _NAMES[target]
        entries = [str(after.raws[ident]["content"]) for ident in after.memories]
        return cap_notes(name, target, before.header.get("chars", 0), entries)

    def write_lock(self, file: Path) -> AbstractContextManager[None]:
        return _locked(file)


def cap_notes(name: str, target: str, had: int, entries: list[str]) -> list[str]:
    """What a plan says of a file whose entries would pass Hermes' cap, with the numbers."""
    cap, chars = CAPS[target], _chars(entries)
    if chars <= cap:
        return []
    outcome = (
        "applying it as proposed is refused (nothing written): shorten or merge entries first"
        if chars >= had
        else f"it held {had:,} before, so applying it is allowed"
    )
    return [
        f"{name} after this plan: {chars:,} of {cap:,} characters, past Hermes' cap by "
        f"{chars - cap:,} (counted as Hermes counts: the entries joined by their delimiters); "
        f"{outcome}"
    ]


_NAMES = {target: name for name, target in FILE_TARGETS.items()}


@contextlib.contextmanager
def _locked(file: Path) -> Iterator[None]:
    """memtui's own lock (`<file>.memtui.lock`: `<file>.lock` is Hermes'), then Hermes' flock."""
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(store_lock(file.with_name(file.name + ".memtui")))
        except StoreLockedError:
            raise StoreLockedError(
                f"{file}: another memtui is writing it ({file.name}.memtui.lock exists); "
                "try again when it is done"
            ) from None
        held.enter_context(_hermes_flock(file))
        yield


@contextlib.contextmanager
def _hermes_flock(file: Path) -> Iterator[None]:
    """The lock Hermes holds around each add, replace and remove: an exclusive flock on
    `<file>.lock`, opened "a+" as Hermes opens it (the file stays, 0 bytes)."""
    lock = file.with_name(file.name + ".lock")
    try:
        handle = open(lock, "a+", encoding="utf-8")  # noqa: SIM115 (held across the yield)
    except OSError as e:
        raise StoreFormatError(f"{lock}: cannot open Hermes' lock file ({e.strerror})") from None
    try:
        deadline = time.monotonic() + HERMES_LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise StoreLockedError(
                        f"{file}: Hermes Agent is writing it (another process holds "
                        f"{lock.name}); nothing was written — try again in a moment"
                    ) from None
                time.sleep(LOCK_RETRY_S)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()


def _named(path: Path) -> bool:
    return path.name in FILE_TARGETS or real_path(path).name in FILE_TARGETS


def _target(path: Path) -> str:
    """`user` for USER.md (also a backup of it in its sidecar), else `memory`."""
    name = real_path(path).name
    if name not in FILE_TARGETS and path.parent.name == "backups":
        owner = path.parent.parent.name
        if owner.endswith(".memtui"):
            name = owner[: -len(".memtui")]
    return FILE_TARGETS.get(name, "memory")


def _universal_newlines(text: str) -> str:
    """What Python's `read_text` gives (Hermes reads with it): CRLF and lone CR become LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _as_hermes_reads(content: str) -> str:
    return _universal_newlines(content).strip()


def _entries(text: str) -> list[str]:
    """Hermes' `_read_file` and its load-time dedupe."""
    if not text.strip():
        return []
    return list(dict.fromkeys(e for e in (p.strip() for p in text.split(DELIMITER)) if e))


def _chars(entries: list[str]) -> int:
    return len(DELIMITER.join(entries))


def _drift(text: str, pieces: list[str]) -> str | None:
    """Why Hermes' drift guard refuses to rewrite this layout (None: it rewrites it). The
    guard's other test, an entry over the cap, is memtui's cap check on what it writes."""
    stripped, joined = text.strip(), DELIMITER.join(pieces)
    if stripped == joined:
        return None
    at = next((i for i, (a, b) in enumerate(zip(stripped, joined, strict=False)) if a != b), None)
    at = min(len(stripped), len(joined)) if at is None else at
    line = text[: len(text) - len(text.lstrip()) + at].count("\n") + 1
    return (
        f"not in the layout Hermes writes (near line {line}: blank lines or spaces around a "
        "§ line, an empty entry, or a § line at the end); Hermes refuses to replace or remove "
        "entries in it and memtui writes nothing to it either — tidy that line by hand"
    )


def fence_findings(name: str, text: str) -> list[str]:
    """A § line inside a fenced code block: Hermes splits there all the same, so the block
    reads as two entries (memtui shows them as Hermes reads them)."""
    found, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        mark = line.lstrip()[:3]
        if mark in ("```", "~~~"):
            fence = None if fence == mark else fence or mark
        elif line == "§" and fence is not None:
            found.append(
                f"{name} line {n}: a § line inside a fenced code block; Hermes splits the block "
                "there, so it reads as two entries"
            )
    return found


def _check_entry(name: str, ident: str, content: str) -> None:
    if not content:
        raise MemtuiError(f"{name}: entry {ident} would be empty; nothing was written")
    if DELIMITER in content or content.startswith("§\n") or content.endswith("\n§"):
        raise MemtuiError(
            f"{name}: entry {ident} holds a line with only § (Hermes' delimiter): it would "
            "read back as two entries; nothing was written"
        )


def _same_entries(source: bytes, entries: list[str]) -> bool:
    try:
        text = _universal_newlines(source.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    pieces = [p.strip() for p in text.split(DELIMITER) if p.strip()]
    return _drift(text, pieces) is None and _entries(text) == entries


def _written_by_memtui(path: Path) -> dict[str, dict[str, Any]]:
    """The records memtui last wrote, by their text, from the store's ledger: the newest
    transaction that wrote a text names its id (transactions that did not land left out)."""
    file = real_path(path)
    sidecar = file.with_name(file.name + ".memtui")
    if path.parent.name == "backups" and path.parent.parent.name.endswith(".memtui"):
        sidecar = path.parent.parent  # a backup: its store's ledger
    ledger = sidecar / "ledger.jsonl"
    if not ledger.is_file():
        return {}
    written: dict[str, dict[str, Any]] = {}
    for tx in SidecarLedger(ledger).read().transactions:
        if tx.state == "aborted":
            continue
        for change in tx.changes:
            raw = change.after_raw
            if raw is not None and isinstance(raw.get("content"), str) and "id" in raw:
                written.pop(raw["content"], None)  # newest last
                written[raw["content"]] = raw
    return written


def _records(entries: list[str], written: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each entry's record, in file order: what memtui wrote for its text (the newest writer
    of an id keeps it), else a new record whose id hashes the text."""
    newest = {text: n for n, text in enumerate(written)}
    claims: dict[str, int] = {}
    for index, text in enumerate(entries):
        raw = written.get(text)
        if raw is None:
            continue
        ident = str(raw["id"])
        held = claims.get(ident)
        if held is None or newest[entries[held]] < newest[text]:
            claims[ident] = index
    claimed = {index: ident for ident, index in claims.items()}
    used = set(claims)
    out: dict[int, dict[str, Any]] = {}
    for index, text in enumerate(entries):
        if index in claimed:
            out[index] = {**written[text], "id": claimed[index]}
            continue
        ident = _hash_id(text, used)
        used.add(ident)
        out[index] = {"id": ident, "content": text}
    return {raw["id"]: raw for _, raw in sorted(out.items())}


def _hash_id(text: str, used: set[str]) -> str:
    base = "h" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    ident, n = base, 1
    while ident in used:
        n += 1
        ident = f"{base}-{n}"
    return ident
