"""`memtui backup`'s copy of a table, and reading it back for a rollback.

A copy is the table as the Go system's `MemoryRecord` JSON Lines (which memtui opens as a
longterm store), with memtui's side statuses in the keys the longterm format keeps for them
(`memtui_status`, `last_decayed_at`; Go ignores both). Each copy is registered in memtui's
own table `memtui_copy` by its sha256, so a rollback takes only a file that is, byte for
byte, a copy of this table in this database.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import MemtuiError
from memtui.stores.postgres import rows
from memtui.stores.postgres.rows import TIMES, Row, Side
from memtui.times import format_iso, parse_iso

COPY = "memtui_copy"
CREATE = f"""
CREATE TABLE IF NOT EXISTS {COPY} (
    store_table TEXT NOT NULL,
    digest TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL,
    row_count BIGINT NOT NULL,
    PRIMARY KEY (store_table, digest)
);
"""
_CHUNK = 1 << 20


def line(row: Row, side: Side | None) -> bytes:
    """One row of the copy: its Go record, and memtui's side status when it has one."""
    record = rows.record(row)
    if side is not None and side.status:
        record["memtui_status"] = side.status
    if side is not None and side.last_decayed_at is not None:
        record["last_decayed_at"] = format_iso(side.last_decayed_at)
    return orjson.dumps(record) + b"\n"


def digest_of(path: Path) -> str:
    sha = hashlib.sha256()
    try:
        with path.open("rb") as f:
            while chunk := f.read(_CHUNK):
                sha.update(chunk)
    except OSError as e:
        raise MemtuiError(f"{path}: cannot read it ({e.strerror})") from None
    return sha.hexdigest()


def read(path: Path) -> Iterator[tuple[Row, Side]]:
    """The copy's rows (as row images) with their side entries, one line at a time."""
    try:
        with path.open("rb") as f:
            for number, text in enumerate(f, start=1):
                if text.strip():
                    yield _row(orjson.loads(text), path, number)
    except OSError as e:
        raise MemtuiError(f"{path}: cannot read it ({e.strerror})") from None
    except orjson.JSONDecodeError:
        raise MemtuiError(f"{path}: not JSON Lines") from None


def _row(record: Any, path: Path, number: int) -> tuple[Row, Side]:
    if not isinstance(record, dict) or not isinstance(record.get("memory_id"), int):
        raise MemtuiError(f"{path}: line {number} is not a memory record")
    try:
        row: Row = {k: record.get(k) for k in rows.COLUMNS if k != "id"}
        row["id"] = record["memory_id"]
        for key in TIMES:
            row[key] = format_iso(parse_iso(row[key]))
        row["tags"] = list(row["tags"] or ())
        row["supersedes"] = list(row["supersedes"] or ())
        decayed = parse_iso(record.get("last_decayed_at"))
    except (TypeError, ValueError):
        raise MemtuiError(f"{path}: line {number} is not a memory record") from None
    return row, Side(record.get("memtui_status"), decayed)
