"""The audit ledger: one `Transaction` per commit, with the before and after image of every
memory it touched, and the append-only JSON Lines file that holds it beside non-native stores.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memtui.errors import StoreFormatError
from memtui.model import Memory
from memtui.times import format_iso, parse_iso


class Actor:
    USER = "user"
    PLAN = "plan"
    LLM = "llm"


@dataclass(slots=True)
class ChangeImage:
    """One memory before and after a transaction (`None`: absent). The `raw` images are the
    record in the store's own format (pi, longterm), so undo restores it byte for byte."""

    id: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    before_raw: dict[str, Any] | None = None
    after_raw: dict[str, Any] | None = None
    # where the entry stood in the file, so that undoing its removal puts it back there
    position: int | None = None

    def before_memory(self) -> Memory | None:
        return Memory.from_dict(self.before) if self.before is not None else None

    def after_memory(self) -> Memory | None:
        return Memory.from_dict(self.after) if self.after is not None else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "before": self.before, "after": self.after}
        if self.before_raw is not None:
            out["before_raw"] = self.before_raw
        if self.after_raw is not None:
            out["after_raw"] = self.after_raw
        if self.position is not None:
            out["position"] = self.position
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ChangeImage:
        return cls(
            d["id"],
            d.get("before"),
            d.get("after"),
            d.get("before_raw"),
            d.get("after_raw"),
            d.get("position"),
        )


@dataclass(slots=True)
class Transaction:
    id: int
    at: datetime
    actor: str
    kind: str
    reason: str
    changes: list[ChangeImage]
    undoes: int | None = None
    backup: str | None = None
    # "pending" until the store file is written (sidecar ledgers), then "committed" or "aborted".
    state: str = "committed"
    sha_after: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    # pi's top-level keys (updatedAt, quotas, …) before and after, so undo restores the file
    header_before: dict[str, Any] | None = None
    header_after: dict[str, Any] | None = None

    @property
    def memory_ids(self) -> list[str]:
        return [c.id for c in self.changes]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "at": format_iso(self.at),
            "actor": self.actor,
            "kind": self.kind,
            "reason": self.reason,
            "changes": [c.to_dict() for c in self.changes],
            "undoes": self.undoes,
            "backup": self.backup,
        }
        if self.sha_after is not None:
            out["sha_after"] = self.sha_after
        if self.details:
            out["details"] = self.details
        if self.header_before is not None:
            out["header_before"] = self.header_before
            out["header_after"] = self.header_after
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], state: str = "committed") -> Transaction:
        at = parse_iso(d["at"])
        assert at is not None
        return cls(
            id=int(d["id"]),
            at=at,
            actor=d["actor"],
            kind=d["kind"],
            reason=d.get("reason", ""),
            changes=[ChangeImage.from_dict(c) for c in d.get("changes", [])],
            undoes=d.get("undoes"),
            backup=d.get("backup"),
            state=state,
            sha_after=d.get("sha_after"),
            details=d.get("details") or {},
            header_before=d.get("header_before"),
            header_after=d.get("header_after"),
        )


def undone_ids(transactions: list[Transaction]) -> dict[int, int]:
    """Which transactions are undone, and by which undo (an undone undo re-does its target)."""
    undoers: dict[int, list[int]] = {}
    for tx in transactions:
        if tx.undoes is not None:
            undoers.setdefault(tx.undoes, []).append(tx.id)
    undone: dict[int, int] = {}
    # newest first, so an undo's own state is known before its target's
    for tx in reversed(transactions):
        active = [u for u in undoers.get(tx.id, []) if u not in undone]
        if active:
            undone[tx.id] = active[-1]
    return undone


class SidecarLedger:
    """`<store>.memtui/ledger.jsonl`: lines `{"tx": {...}}` (written as pending before the
    store) and `{"tx_id": N, "state": "committed" | "aborted"}` (written after)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> list[Transaction]:
        """All transactions in order, pending ones included (their state says so)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise StoreFormatError(f"{self.path}: cannot read the ledger: {e.strerror}") from None
        txs: dict[int, Transaction] = {}
        lines = data.split(b"\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                entry = orjson.loads(line)
                if "tx" in entry:
                    tx = Transaction.from_dict(entry["tx"], state="pending")
                    txs[tx.id] = tx
                elif entry.get("tx_id") in txs:
                    txs[entry["tx_id"]].state = entry["state"]
            except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AssertionError):
                if number == len(lines):  # a torn last line: the writer died mid-append
                    break
                raise StoreFormatError(
                    f"{self.path}: ledger line {number} is damaged; "
                    "move the file aside to open the store without its history"
                ) from None
        return list(txs.values())

    def append(self, entry: dict[str, Any]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        line = orjson.dumps(entry) + b"\n"
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size:
                # cut a torn last line left by a writer that died mid-append
                last = os.pread(fd, min(size, 1 << 20), max(0, size - (1 << 20)))
                if not last.endswith(b"\n"):
                    cut = last.rfind(b"\n")
                    os.ftruncate(fd, size - len(last) + cut + 1 if cut >= 0 else 0)
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def add_pending(self, tx: Transaction) -> None:
        self.append({"tx": tx.to_dict()})

    def mark(self, tx_id: int, state: str) -> None:
        with contextlib.suppress(OSError):
            self.append({"tx_id": tx_id, "state": state})
