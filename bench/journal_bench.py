"""A native store's growth with its journal: 100 transactions on a 20,000-entry store with the
previous journal (a whole before and after image per change) and with the current one (changed
fields only), side by side in one run; then `memtui compact` of the previous one.

    python bench/journal_bench.py [--entries 20000] [--transactions 100] [--touch 200]

Each transaction changes the importance of `--touch` entries (a decay-like edit). Start-up is
`Store.open` plus reading the history (`transactions()`), best of 3. Backups: the folder's size
(older backups of stores over 1 MiB are compressed).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from store_bench import best_of

from memtui.demo import make_demo_memories
from memtui.stores import Change, create_native_store, open_store
from memtui.stores.file import backups
from memtui.stores.file.compaction import compact_store
from memtui.stores.ledger import ChangeImage

NOW = datetime(2026, 11, 30, tzinfo=UTC)


@contextmanager
def full_images() -> Iterator[None]:
    """The previous journal: every change written with whole images; backups plain."""
    compact_to_dict = ChangeImage.to_dict

    def whole(self: ChangeImage) -> dict[str, Any]:
        self.compact = False
        return compact_to_dict(self)

    pack_over = backups.PACK_OVER
    ChangeImage.to_dict = whole  # type: ignore[method-assign]
    backups.PACK_OVER = 1 << 62  # and plain backups
    try:
        yield
    finally:
        ChangeImage.to_dict = compact_to_dict  # type: ignore[method-assign]
        backups.PACK_OVER = pack_over


def start_up(path: Path) -> tuple[float, float]:
    """Opening the store; opening it and reading its history."""
    return best_of(3, lambda: open_store(path)), best_of(3, lambda: open_store(path).history())


def folder_size(folder: Path) -> int:
    seen, total = set(), 0
    for p in folder.rglob("*"):
        st = p.stat()
        if p.is_file() and st.st_ino not in seen:
            seen.add(st.st_ino)
            total += st.st_size
    return total


def history(path: Path, transactions: int, touch: int) -> None:
    rng = random.Random(7)
    store = open_store(path)
    for n in range(transactions):
        chosen = rng.sample(store.memories(), touch)
        store.commit(
            [Change(m, m.with_(importance=round(m.importance * 0.97, 6))) for m in chosen],
            actor="user",
            kind="edit",
            reason=f"bench {n}",
            now=NOW + timedelta(minutes=n),
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=20_000)
    parser.add_argument("--transactions", type=int, default=100)
    parser.add_argument("--touch", type=int, default=200)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="memtui-journal-"))
    try:
        fresh = folder / "fresh" / "store.json"
        fresh.parent.mkdir()
        create_native_store(
            fresh, make_demo_memories(args.entries, 11, NOW), now=NOW, kind="import", reason="b"
        )
        rows: list[tuple[str, int, tuple[float, float], int]] = [
            ("fresh", fresh.stat().st_size, start_up(fresh), 0)
        ]
        for name in ("previous", "current"):
            path = folder / name / "store.json"
            path.parent.mkdir()
            shutil.copy(fresh, path)
            start = time.perf_counter()
            if name == "previous":
                with full_images():
                    history(path, args.transactions, args.touch)
            else:
                history(path, args.transactions, args.touch)
            took = time.perf_counter() - start
            sidecar = path.parent / "store.json.memtui"
            rows.append((name, path.stat().st_size, start_up(path), folder_size(sidecar)))
            print(f"{name}: {args.transactions} transactions in {took:.1f} s")
        previous = folder / "previous" / "store.json"
        compact_store(open_store(previous), now=NOW + timedelta(days=1))
        rows.append(("previous, compacted", previous.stat().st_size, start_up(previous), 0))
        base_size, (base_open, base_history) = rows[0][1], rows[0][2]
        print(f"\n{args.entries:,} entries, {args.transactions} transactions of {args.touch}")
        print(
            f"{'journal':<21} {'file bytes':>12} {'×fresh':>7} {'open s':>8} {'×fresh':>7} "
            f"{'+history s':>10} {'×fresh':>7} {'backups bytes':>14}"
        )
        for name, size, (opened, read), kept in rows:
            print(
                f"{name:<21} {size:>12,} {size / base_size:>7.2f} {opened:>8.3f} "
                f"{opened / base_open:>7.2f} {read:>10.3f} {read / base_history:>7.2f} "
                f"{kept:>14,}"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
