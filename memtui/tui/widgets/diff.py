"""Before/after views of records: the content diff highlighted, and the fields that changed.
Text goes in as data (escaped, no markup)."""

from __future__ import annotations

import re
from datetime import datetime
from difflib import SequenceMatcher
from typing import Any

from rich.text import Text

from memtui.model import MEMORY_FIELDS, Memory
from memtui.textsafe import literal, one_line
from memtui.views import shorten

_WORDS = re.compile(r"\s+|[^\s]+")
_SKIP = {"content", "embedding"}


def _tokens(text: str) -> list[str]:
    # words for alphabetic scripts, characters for CJK (no spaces to split on)
    return _WORDS.findall(text) if text.isascii() else list(text)


def content_diff(before: str | None, after: str | None) -> Text:
    """`after`, with what it removed from `before` struck through in red and what it added in
    green."""
    if before is None:
        return Text(literal(after or ""), style="green")
    if after is None:
        return Text(literal(before), style="red strike")
    if before == after:
        return Text(literal(after))
    old, new = _tokens(before), _tokens(after)
    out = Text()
    for op, a1, a2, b1, b2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(literal("".join(old[a1:a2])))
            continue
        if op in ("delete", "replace"):
            out.append(literal("".join(old[a1:a2])), style="red strike")
        if op in ("insert", "replace"):
            out.append(literal("".join(new[b1:b2])), style="bold green")
    return out


def _show(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, tuple | list):
        return ", ".join(map(str, value)) or "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if hasattr(value, "value"):
        return str(value.value)  # enums
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds").replace("+00:00", "Z")
    return str(value)


def field_changes(before: Memory | None, after: Memory | None) -> list[tuple[str, str, str]]:
    """(field, old, new) for every field (but content) that differs."""
    if before is None or after is None:
        return []
    out = []
    for name in MEMORY_FIELDS:
        if name in _SKIP:
            continue
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            out.append((name, one_line(_show(old)), one_line(_show(new))))
    if before.embedding != after.embedding:
        out.append(("embedding", "changed" if before.embedding else "-", "changed"))
    return out


def record_change(before: Memory | None, after: Memory | None) -> Text:
    """One entry's change: a heading, the content diff and the field changes."""
    target = after or before
    assert target is not None
    head = Text()
    if before is None:
        head.append("new ", style="bold green")
    elif after is None:
        head.append("removed ", style="bold red")
    else:
        head.append("changed ", style="bold")
    head.append(one_line(target.id), style="dim")
    if after is not None and before is not None and before.status != after.status:
        head.append(f"  {before.status.value} → {after.status.value}", style="bold")
    parts = [head, Text("\n")]
    parts.append(content_diff(before.content if before else None, after.content if after else None))
    for name, old, new in field_changes(before, after):
        line = Text(f"\n  {name}: ", style="dim")
        line.append(old, style="red")
        line.append(" → ")
        line.append(new, style="green")
        parts.append(line)
    return Text("").join(parts)


def recorded_change(ident: str, diff: dict[str, list[Any]] | None) -> Text:
    """A change whose entry was changed outside memtui since, so no image rebuilds it: the
    fields as the ledger recorded them, before → after."""
    head = Text("changed ", style="bold")
    head.append(one_line(ident), style="dim")
    head.append(
        "  (changed outside memtui since: the fields as the ledger recorded them)", style="yellow"
    )
    parts = [head]
    for name, pair in sorted((diff or {}).items()):
        old, new = [*pair, None, None][:2] if isinstance(pair, list) else (None, pair)
        line = Text(f"\n  {name}: ", style="dim")
        line.append(shorten(one_line(_show(old)), 200), style="red")
        line.append(" → ")
        line.append(shorten(one_line(_show(new)), 200), style="green")
        parts.append(line)
    if not diff:
        parts.append(Text("\n  (no fields recorded)", style="dim"))
    return Text("").join(parts)
