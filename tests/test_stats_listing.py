"""`memtui stats` on a store of many users prints the biggest few of each count and how many
more there are; `--json` keeps every one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memtui.model import Memory
from memtui.stores import create_native_store
from tests.conftest import NOW, CliResult


def test_stats_names_the_biggest_users_and_counts_the_rest(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    memories = [
        Memory(id=f"m{u}-{i}", content=f"note {u} {i}", user_id=f"user-{u:02d}", created_at=NOW)
        for u in range(20)
        for i in range(u + 1)  # user-19 has the most
    ]
    store = tmp_path / "store.json"
    create_native_store(store, memories, now=NOW, kind="import", reason="test")
    shown = cli("stats", store)
    assert shown.code == 0
    [users] = [line for line in shown.out.splitlines() if line.lstrip().startswith("users")]
    assert users.split(None, 1)[1].startswith("user-19 20, user-18 19, user-17 18")
    assert users.count("user-") == 12 and users.endswith("… and 8 more (--json lists them all)")
    every = json.loads(cli("stats", store, "--json").out)["users"]
    assert len(every) == 20 and every["user-00"] == 1
