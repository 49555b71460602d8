"""Claude Code's auto memory folder (`~/.claude/projects/<project>/memory/`, or the folder
`autoMemoryDirectory` names; sub-agents' `.claude/agent-memory/<agent>/`) as one store.

The layout Claude Code writes (its auto-memory prompt; fixtures: tests/fixtures/README.md):
each memory is its own `*.md` file, YAML frontmatter then the body::

    ---
    name: Integration tests hit a real database
    description: no mocked database in integration tests
    type: feedback
    ---

    Integration tests must hit a real database, not mocks.

    **Why:** a mocked migration passed while the real one failed in production.
    **How to apply:** ...

`type` is one of user, feedback, project, reference (some versions nest it: `metadata:` /
`  type: ...`). `MEMORY.md` is the index: no frontmatter, one line a memory,
`- [Title](file.md) — one-line hook`; Claude Code loads its first 200 lines (or 25 KB). A
`team/` subfolder may hold more memory files. The agent writes with ordinary writes, no lock.

One entry per memory file: id = the file name, content = the body, category = the type,
`extra` = name, description, file, hook (the index line's text after the link); times from the
file (ctime/mtime). What memtui did not change stays byte for byte: a changed value is spliced
into its own frontmatter line (unknown keys, comments, quoting of other lines, the body's layout
kept), and the index keeps every line but those of the memories changed or removed.

Why no YAML library: the frontmatter Claude Code writes is `key: value` lines (one nesting
level under `metadata:`); a YAML library would re-serialise the block (losing comments, order
and quoting) and PyYAML is not a dependency. Anything beyond that (block scalars, lists, flow
maps) is refused with the line it is on, so nothing is misread.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import MemtuiError, StoreFormatError
from memtui.model import Memory, Status
from memtui.stores.file import folder_tx
from memtui.stores.file.files import real_path
from memtui.stores.formats.document import Document, FormatDefaults
from memtui.stores.formats.records import Records
from memtui.stores.ledger import SidecarLedger
from memtui.times import format_iso, parse_iso_or_none
from memtui.traits import FormatTraits

KIND = "claude-code"
INDEX = "MEMORY.md"
MEMBER_PATTERNS = ("*.md", "team/*.md")


@dataclass(frozen=True, slots=True)
class ClaudeTraits:
    """What else differs about this format from the single-file ones (beside its
    FormatTraits): candidates for FormatTraits fields."""

    users: bool = False  # one store, no users
    categories: tuple[str, ...] = ("user", "feedback", "project", "reference")
    untyped_category: str = "note"  # a memory file without a `type`
    merge_removes_member_files: bool = True  # a merge rewrites the base's file only
    index_max_lines: int = 200  # Claude Code loads only these of MEMORY.md
    index_max_bytes: int = 25_000
    multi_file: bool = True  # written by folder_tx, one transaction over many files
    fields: tuple[str, ...] = ("name", "description", "file", "hook")


TRAITS = ClaudeTraits()

_FENCE = "---"
_KEY = re.compile(r"^([A-Za-z_][\w.-]*):(?:[ \t]+(.*?))?[ \t]*$")
_NESTED = re.compile(r"^([ \t]+)([A-Za-z_][\w.-]*):(?:[ \t]+(.*?))?[ \t]*$")
INDEX_LINE = re.compile(r"^(\s*[-*+]\s+\[)([^\]\n]*)(\]\()([^)\s]+\.md)(\))(.*?)(\r?\n)?$")
_HOOK_SEP = re.compile(r"^(\s*(?:—|–|-|:)\s*|\s+)")
_PLAIN = re.compile(r"^[^\s\"'#&*!|>%@`{}\[\],?:-][^\n]*$")
_YAML_WORDS = re.compile(r"^(?:true|false|yes|no|on|off|null|~|[-+]?\d[\d_.eE+-]*)$", re.IGNORECASE)


class ClaudeFormat(FormatDefaults):
    name = KIND
    file_mode = 0o644
    # one memory a file; the index says nothing of users, statuses or lineage
    traits = FormatTraits(
        keeps=frozenset({Status.ACTIVE}),
        categories=frozenset({*TRAITS.categories, TRAITS.untyped_category}),
        has_users=False,
        lineage_in_store=False,
        holds_importance=False,
        plan_notes=True,
    )

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        files = folder_tx.unpack(value, KIND)
        return None if files is None else self.parse(files, path)

    def parse(self, value: Any, path: Path) -> Document:
        files: dict[str, str] = value
        index_text = files.get(INDEX)
        listed = _index_links(index_text or "")
        memories: dict[str, Memory] = {}
        raws = Records()
        written = _written_by_memtui(path)
        names = [name for name in files if name != INDEX]
        for name in names:
            text = files[name]
            _split(text, f"{path}/{name}")  # refuse broken frontmatter with its line
            ident = written.get(name, name)
            if ident in raws or (ident != name and ident in files):
                ident = name
            raw: dict[str, Any] = {"id": ident, "file": name, "text": text}
            if name in listed:
                raw["title"], raw["hook"] = listed[name][2], listed[name][3]
            raws[ident] = raw
            memories[ident] = self.decode(raw, path)
        findings = []
        for line_no, target, _title, _hook in listed.values():
            if target not in files:
                findings.append(f"{INDEX} line {line_no} points at {target}, which does not exist")
        over = index_overflow(index_text or "")
        if over:
            findings.append(
                f"{INDEX} is past what Claude Code loads ({TRAITS.index_max_lines} lines or "
                f"{TRAITS.index_max_bytes // 1000} KB): {len(over)} lines never reach the agent, "
                f"from {over[0].strip()[:60]!r}"
            )
        for name in names:
            if name not in listed:
                findings.append(f"{name} is not listed in {INDEX} (Claude Code will not see it)")
        header: dict[str, Any] = {
            "index": index_text,
            "listed": {n: [t, h] for n, (_line, _n, t, h) in listed.items()},
            "findings": findings,
            "files": names,
            "layout_bytes": None,
        }
        return Document(memories, raws, header)

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        name = str(raw.get("file", raw["id"]))
        front, body = _split(str(raw["text"]), name)
        values = front.values if front is not None else {}
        kind = values.get("type") or values.get("metadata.type") or TRAITS.untyped_category
        extra: dict[str, Any] = {"file": name}
        for key in ("name", "description"):
            if key in values:
                extra[key] = values[key]
        if raw.get("hook") is not None:
            extra["hook"] = raw["hook"]
        return Memory(
            id=str(raw["id"]),
            content=_content(body)[1],
            category=kind,
            created_at=parse_iso_or_none(raw.get("created")),
            updated_at=parse_iso_or_none(raw.get("updated")),
            extra=extra,
        )

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        if not self.keeps(memory):
            return None
        text = _render_file(memory, None if base is None else str(base["text"]))
        out: dict[str, Any] = {"id": memory.id, "file": _file_for(memory, base), "text": text}
        # the index line's title and hook: absent from `extra` means unchanged
        hook = memory.extra.get("hook", None if base is None else base.get("hook"))
        if base is None:
            out["title"] = _one_line(memory.extra.get("name") or _first_words(memory.content))
            hook = hook or memory.extra.get("description") or _first_words(memory.content, 12)
        elif "title" in base:
            out["title"] = _title_for(memory, str(base["title"]), base)
        else:
            hook = None  # a file the index does not list stays unlisted
        if hook is not None:
            out["hook"] = _one_line(hook)
        for key, when in (("created", memory.created_at), ("updated", memory.updated_at)):
            if when is not None:
                out[key] = format_iso(when)
        if base is not None and {k: v for k, v in out.items() if k not in _TIMES} == {
            k: v for k, v in base.items() if k not in _TIMES
        }:
            return base
        return out

    def keeps(self, memory: Memory) -> bool:
        return memory.status is Status.ACTIVE

    def plan_notes(self, before: Document, after: Document) -> list[str]:
        index = render_index(after, check=False)
        return [] if index is None else index_notes(before.header.get("index") or "", index)

    def new_id(self, doc: Document, now: datetime) -> str:
        while True:
            ident = f"memory_{os.urandom(3).hex()}.md"
            if ident not in doc.memories:
                return ident

    def render(self, doc: Document, now: datetime | None) -> bytes:
        files: dict[str, str] = {}
        for ident in doc.memories:
            raw = doc.raws[ident]
            name = str(raw.get("file", ident))
            if not _good_name(name):
                raise MemtuiError(f"{name}: not a name a Claude Code memory file can have")
            if name in files:
                raise MemtuiError(
                    f"{name}: two memories would be written to this file; nothing was written"
                )
            files[name] = str(raw["text"])
        index = render_index(doc)
        if index is not None:
            files[INDEX] = index
        return folder_tx.pack(KIND, files)


_TIMES = ("created", "updated")


def _good_name(name: str) -> bool:
    return name != INDEX and name.endswith(".md") and "/" not in name.removeprefix("team/")


def _file_for(memory: Memory, base: dict[str, Any] | None) -> str:
    """The file a memory is written to: its own; a merge's, the base's (`extra.file`, which
    the merge takes from the base); a new one's, a name made from its type and name."""
    if base is not None:
        return str(base.get("file", base["id"]))
    wanted = memory.extra.get("file")
    if isinstance(wanted, str) and _good_name(wanted):
        return wanted
    if _good_name(memory.id):
        return memory.id
    words = re.findall(r"[a-z0-9]+", str(memory.extra.get("name") or memory.content).lower())
    slug = "_".join(words[:5]) or "memory"
    return f"{memory.category}_{slug}.md" if memory.category in TRAITS.categories else f"{slug}.md"


def _written_by_memtui(path: Path) -> dict[str, str]:
    """file -> the id memtui last wrote it under (a merged entry keeps the id the merge gave
    it), from the store's ledger; transactions that did not land left out."""
    sidecar = path.with_name(path.name + ".memtui")
    if path.parent.name == "backups" and path.parent.parent.name.endswith(".memtui"):
        sidecar = path.parent.parent  # a backup: its store's ledger
    ledger = sidecar / "ledger.jsonl"
    if not ledger.is_file():
        return {}
    written: dict[str, str] = {}
    for tx in SidecarLedger(ledger).read().transactions:
        if tx.state == "aborted":
            continue
        for change in tx.changes:  # removals first: a merge's base file is removed, then
            before = change.before_raw  # written again under the merged entry's id
            if before is not None and change.after_raw is None:
                written.pop(str(before.get("file")), None)
        for change in tx.changes:
            after = change.after_raw
            if after is not None and isinstance(after.get("file"), str):
                written[after["file"]] = str(after["id"])
    return written


# -- frontmatter -------------------------------------------------------------------------------


@dataclass(slots=True)
class Front:
    lines: list[str]  # the lines between the fences, each with its line ending
    values: dict[str, str]  # unquoted; nested keys as `metadata.type`
    at: dict[str, int]  # key -> index into `lines`


def _split(text: str, where: str) -> tuple[Front | None, str]:
    """The frontmatter (None: the file has none) and the body after it."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != _FENCE:
        return None, text
    for end in range(1, len(lines)):
        if lines[end].rstrip("\r\n") == _FENCE:
            break
    else:
        raise StoreFormatError(
            f"{where}: the frontmatter opened on line 1 is never closed (no second '---' "
            "line); memtui does not guess where the memory begins"
        )
    front = Front(lines[1:end], {}, {})
    parent: str | None = None
    for n, line in enumerate(front.lines):
        bare = line.rstrip("\r\n")
        if not bare.strip() or bare.lstrip().startswith("#"):
            continue
        nested = _NESTED.match(bare)
        if nested and parent is not None:
            key = f"{parent}.{nested.group(2)}"
            front.values[key] = _unquote(nested.group(3) or "", where, n + 2)
            front.at[key] = n
            continue
        top = _KEY.match(bare)
        if top is None:
            raise StoreFormatError(
                f"{where}: line {n + 2} of the frontmatter is not `key: value` ({bare[:40]!r}); "
                "memtui reads only the frontmatter Claude Code writes"
            )
        key, value = top.group(1), top.group(2) or ""
        parent = key if not value else None
        if value:
            front.values[key] = _unquote(value, where, n + 2)
        front.at[key] = n
    return front, "".join(lines[end + 1 :])


def _unquote(value: str, where: str, line: int) -> str:
    if value[:1] in "|>[{&*!":
        raise StoreFormatError(
            f"{where}: line {line} of the frontmatter holds YAML memtui does not read "
            f"({value[:20]!r}: a block, list or map); write the value on one line"
        )
    if len(value) >= 2 and value[0] == value[-1] == '"':
        try:
            out = json.loads(value)
        except ValueError:
            out = value[1:-1]
        return str(out)
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value.split(" #", 1)[0].rstrip()


def _quote(value: str, old: str | None) -> str:
    """The value as a one-line YAML scalar (plain where plain reads back the same)."""
    value = " ".join(value.split()) if "\n" in value or "\r" in value else value
    plain = (
        _PLAIN.match(value) is not None
        and ": " not in value
        and " #" not in value
        and value == value.strip()
        and not _YAML_WORDS.match(value)
    )
    if plain and not (old or "").startswith(('"', "'")):
        return value
    return json.dumps(value, ensure_ascii=False)


def _content(body: str) -> tuple[str, str, str]:
    """The body as (leading blank lines, content, trailing whitespace)."""
    stripped = body.lstrip("\r\n")
    lead = body[: len(body) - len(stripped)]
    content = stripped.rstrip()
    return lead, content, stripped[len(content) :]


def _render_file(memory: Memory, base: str | None) -> str:
    """The memory file for `memory`: `base` with only what changed spliced in."""
    want = {
        "name": memory.extra.get("name"),
        "description": memory.extra.get("description"),
    }
    kind = memory.category
    if base is None:
        name = str(want["name"] or _first_words(memory.content))
        desc = str(want["description"] or _first_words(memory.content, 12))
        lines = [f"name: {_quote(name, None)}\n", f"description: {_quote(desc, None)}\n"]
        if kind != TRAITS.untyped_category:
            lines.append(f"type: {_quote(kind, None)}\n")
        return f"---\n{''.join(lines)}---\n\n{memory.content.strip()}\n"
    front, body = _split(base, memory.id)
    lead, content, trail = _content(body)
    new_body = (
        body
        if content == memory.content.strip()
        else lead + memory.content.strip() + (trail or "\n")
    )
    eol = "\r\n" if "\r\n" in base else "\n"
    if front is None:
        values: dict[str, str] = {}
        kind_key = "type"
        front_lines: list[str] = []
    else:
        values, front_lines = front.values, list(front.lines)
        kind_key = "metadata.type" if "type" not in values and "metadata.type" in values else "type"
    wanted: dict[str, str | None] = {
        "name": None if want["name"] is None else str(want["name"]),
        "description": None if want["description"] is None else str(want["description"]),
        kind_key: None if kind == TRAITS.untyped_category else kind,
    }
    changed = False
    for key, value in wanted.items():
        if value is None or values.get(key) == value:
            continue
        changed = True
        line = _key_line(key, value, values, front, eol)
        if front is not None and key in front.at:
            front_lines[front.at[key]] = line
        else:
            front_lines.append(line)
    if front is None and not changed:
        return new_body
    if front is None:
        return f"---{eol}{''.join(front_lines)}---{eol}{eol}{new_body.lstrip(chr(13) + chr(10))}"
    first = base.splitlines(keepends=True)
    head = first[0]
    closing = first[len(front.lines) + 1]
    return head + "".join(front_lines) + closing + new_body


def _key_line(key: str, value: str, values: dict[str, str], front: Front | None, eol: str) -> str:
    if front is not None and key in front.at:
        old_line = front.lines[front.at[key]]
        indent = old_line[: len(old_line) - len(old_line.lstrip())]
        bare = old_line.rstrip("\r\n")
        ending = old_line[len(bare) :] or eol
        short = key.rsplit(".", 1)[-1]
        old_value = bare.split(":", 1)[1].strip()
        return f"{indent}{short}: {_quote(value, old_value)}{ending}"
    if key == "metadata.type":
        return f"metadata:{eol}  type: {_quote(value, None)}{eol}"
    return f"{key}: {_quote(value, None)}{eol}"


def _one_line(value: object) -> str:
    return " ".join(str(value).replace("]", ")").split())


def _first_words(text: str, n: int = 6) -> str:
    words = text.split()
    return " ".join(words[:n]) + ("…" if len(words) > n else "")


# -- the index ---------------------------------------------------------------------------------


def _index_links(text: str) -> dict[str, tuple[int, str, str, str]]:
    """file -> (line number, file, title, hook) for each index line (the first for a file)."""
    out: dict[str, tuple[int, str, str, str]] = {}
    for n, line in enumerate(text.splitlines(keepends=True), 1):
        m = INDEX_LINE.match(line)
        if m is None:
            continue
        target = m.group(4).removeprefix("./")
        hook = _HOOK_SEP.sub("", m.group(6), count=1).strip()
        out.setdefault(target, (n, target, m.group(2), hook))
    return out


def is_index(text: str) -> bool:
    """Whether `text` reads as a Claude Code MEMORY.md (at least one link to a .md file)."""
    return any(INDEX_LINE.match(line) for line in text.splitlines())


def render_index(doc: Document, *, check: bool = True) -> str | None:
    """MEMORY.md for `doc`: lines of removed memories dropped, lines of memories whose title
    or hook changed rewritten, lines for new memories appended; every other line as it was.
    Raises MemtuiError (nothing written) when the result passes what Claude Code loads
    (unless not `check`)."""
    text: str | None = doc.header.get("index")
    listed: dict[str, list[str]] = doc.header.get("listed", {})
    if text is None and not doc.memories:
        return None
    lines = (text or "").splitlines(keepends=True)
    eol = "\r\n" if text and "\r\n" in text else "\n"
    out: list[str] = []
    seen: set[str] = set()
    known = set(doc.header.get("files", ()))
    by_file = {str(doc.raws[i].get("file", i)): i for i in doc.memories}
    for line in lines:
        m = INDEX_LINE.match(line)
        target = m.group(4).removeprefix("./") if m else None
        if m is None or target is None or target not in listed or target not in known:
            out.append(line)  # prose, headings, and links to files that were already missing
            continue
        if target not in by_file:
            continue  # memtui removed its file (a merge, a deletion)
        if target in seen:
            out.append(line)
            continue
        seen.add(target)
        raw = doc.raws[by_file[target]]
        title, hook = listed[target]
        new_title = str(raw.get("title", title))
        new_hook = str(raw.get("hook", hook))
        if (new_title, new_hook) == (title, hook):
            out.append(line)
            continue
        sep_match = _HOOK_SEP.match(m.group(6))
        sep = sep_match.group(1) if sep_match and m.group(6).strip() else " — "
        ending = m.group(7) or ""
        out.append(f"{m.group(1)}{new_title}{m.group(3)}{m.group(4)}{m.group(5)}{sep}{new_hook}")
        out[-1] += ending
    for name, ident in by_file.items():
        raw = doc.raws[ident]
        if name in listed or name in known or "title" not in raw:
            continue  # listed already, or a file the index did not list (it stays so)
        if out and not out[-1].endswith("\n"):
            out[-1] += eol
        memory = doc.memories[ident]
        title = str(raw["title"])
        hook = str(raw.get("hook") or _first_words(memory.content, 12))
        out.append(f"- [{title}]({name}) — {hook}{eol}")
    new = "".join(out)
    for source in doc.header.get("sources", ()):
        earlier = _index_of(source)
        if earlier is not None and _same_index(earlier, new, text or "", doc):
            return earlier  # an undo: the index as it was, lines in their places
    if check:
        _check_index(text or "", new)
    return new


def _index_of(source: bytes) -> str | None:
    try:
        files = folder_tx.unpack(orjson.loads(source), KIND)
    except (orjson.JSONDecodeError, StoreFormatError):
        return None
    return None if files is None else files.get(INDEX)


def _same_index(earlier: str, new: str, current: str, doc: Document) -> bool:
    """Whether `earlier` (a backup's index) says what `new` says, only its memory lines in
    other places: then it is what the index was before the change an undo reverts."""
    entries = {str(doc.raws[i].get("file", i)) for i in doc.memories}
    entries |= set(doc.header.get("files", ()))
    for old_source in doc.header.get("sources", ()):
        files = _files_of(old_source)
        entries |= {n for n in files if n != INDEX}

    def skeleton(text: str) -> list[str]:
        return [
            line
            for line in text.splitlines(keepends=True)
            if not ((m := INDEX_LINE.match(line)) and m.group(4).removeprefix("./") in entries)
        ]

    def links(text: str) -> dict[str, tuple[str, str]]:
        return {
            t: (title, hook) for _n, t, title, hook in _index_links(text).values() if t in entries
        }

    return skeleton(earlier) == skeleton(current) and links(earlier) == links(new)


def _files_of(source: bytes) -> dict[str, str]:
    try:
        return folder_tx.unpack(orjson.loads(source), KIND) or {}
    except (orjson.JSONDecodeError, StoreFormatError):
        return {}


def _title_for(memory: Memory, title: str, base: dict[str, Any]) -> str:
    """An index line's title follows the memory's name where it showed the name it had."""
    name = memory.extra.get("name")
    front, _body = _split(str(base["text"]), memory.id)
    old_name = front.values.get("name") if front is not None else None
    if name is None or title != old_name:
        return title
    return _one_line(name)


def index_overflow(text: str) -> list[str]:
    """The index lines past what Claude Code loads (line 201 on, or past 25 KB)."""
    lines = text.splitlines(keepends=True)
    kept, size = 0, 0
    for line in lines[: TRAITS.index_max_lines]:
        size += len(line.encode("utf-8"))
        if size > TRAITS.index_max_bytes:
            break
        kept += 1
    return [line.rstrip("\r\n") for line in lines[kept:]]


def index_notes(old: str, new: str) -> list[str]:
    """What a plan says of an index going from `old` to `new` when `new` is past what Claude
    Code loads: how long it would be, which lines would fall off, whether applying is refused."""
    over = index_overflow(new)
    if not over:
        return []
    lines = new.count("\n") + (0 if new.endswith("\n") else 1)
    size = len(new.encode("utf-8"))
    shown = "; ".join(line.strip()[:60] for line in over[:3])
    more = f" and {len(over) - 3} more" if len(over) > 3 else ""
    refused = _refuses(old, new, over)
    outcome = (
        "applying it as proposed is refused (nothing written): approve fewer new memories or "
        "merge some first"
        if refused
        else f"before this plan {len(index_overflow(old))} did (it makes the index no longer)"
    )
    return [
        f"{INDEX} after this plan: {lines} lines ({size:,} bytes); Claude Code loads only the "
        f"first {TRAITS.index_max_lines} lines or {TRAITS.index_max_bytes // 1000} KB, so "
        f"{len(over)} would fall off ({shown}{more}); {outcome}"
    ]


def _refuses(old: str, new: str, over: list[str]) -> bool:
    """Whether a write of `new` over `old` is refused: past the limit, unless it was past
    already and does not grow."""
    return bool(over) and not (len(index_overflow(old)) >= len(over) and len(new) <= len(old))


def _check_index(old: str, new: str) -> None:
    """Refuse an index that would pass what Claude Code loads, unless it was past already
    and does not grow."""
    over = index_overflow(new)
    if not _refuses(old, new, over):
        return
    lines = new.count("\n") + (0 if new.endswith("\n") else 1)
    shown = "; ".join(line.strip()[:60] for line in over[:3])
    raise MemtuiError(
        f"{INDEX} would have {lines} lines ({len(new.encode('utf-8')):,} bytes); Claude Code "
        f"loads only the first {TRAITS.index_max_lines} lines or "
        f"{TRAITS.index_max_bytes // 1000} KB, so {len(over)} would fall off ({shown}); "
        "nothing was written"
    )


# -- recognising a folder ----------------------------------------------------------------------


def claude_folder(path: Path) -> Path | None:
    """The Claude Code memory folder `path` names (the folder or its MEMORY.md), None when it
    is no such folder (a Hermes `memories` folder, a single store file). A folder of other
    markdown is refused with one line."""
    real = real_path(path)
    if real.is_file():
        if real.name != INDEX or (real.parent / "USER.md").exists():
            return None
        try:
            text = real.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        return real.parent if is_index(text) else None
    if not real.is_dir():
        return None
    index = real / INDEX
    if index.is_file():
        try:
            text = index.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if is_index(text):
            return real
        if (real / "USER.md").exists() or text.strip():
            return None  # Hermes' notes (a MEMORY.md that links to no memory file)
        return real  # an empty index: Claude Code's folder before its first memory
    members = sorted(p for p in real.glob("*.md") if p.is_file())
    if not members:
        return None  # a folder, no store: said as for any folder
    for member in members[:50]:
        try:
            head = member.read_text(encoding="utf-8", errors="replace")[:2000]
        except OSError:
            continue
        if head.startswith("---") and re.search(r"^(?:  )?type:", head, re.MULTILINE):
            return real
    raise StoreFormatError(
        f"{path}: not a Claude Code memory folder (no MEMORY.md index linking to memory "
        "files, and no memory file with name/description/type frontmatter)"
    )
