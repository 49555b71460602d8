"""`memtui watch`: a test agent adds, rewrites and deletes entries in bursts — pi's way (a temp
file renamed over the store) and the Go system's JSONL way (the file rewritten in place) — while
`memtui watch` runs as its own process; after each burst the agent waits until watch has
reported every entry it touched (its JSON lines), never for a fixed time. Then every memory the
agent removed or rewrote is in the record with its record as it was, and `restore --outside`
brings each back byte for byte."""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from memtui.service import Service
from tests.conftest import FIXTURES, CliResult
from tests.pg_agent import insert, rows, tombstone, update
from tests.pg_server import PgServer, pg_dsn, pg_server  # noqa: F401

# a safety net for a hung watcher only: every wait below ends on watch's own report
_HUNG = 120


class Watcher:
    """`memtui watch --json` as a subprocess, its report lines read as they come."""

    def __init__(self, *stores: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memtui", "watch", "--json", "--poll", "0.5", *stores],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        first = self.next()
        assert "watching" in first, first

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next(self) -> dict[str, Any]:
        try:
            return self.lines.get(timeout=_HUNG)
        except queue.Empty:
            self.proc.kill()
            raise AssertionError(f"watch reported nothing: {self.proc.stderr.read()}") from None  # type: ignore[union-attr]

    def wait_for(self, ids: set[str]) -> None:
        """Until watch has reported each of `ids` (as added, changed or removed)."""
        seen: set[str] = set()
        while not ids <= seen:
            report = self.next()
            for kind in ("added", "changed", "removed"):
                seen.update(str(i) for i in report.get(kind, []))

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=_HUNG)
        return code


# -- the test agents ------------------------------------------------------------------------


def _write_pi(path: Path, doc: dict[str, Any]) -> None:
    """pi's way: the whole file to a temp name, renamed over the store."""
    tmp = path.with_name(path.name + ".tmp-agent")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)


def _write_go_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    """The Go system's way: the file truncated and written in place (os.WriteFile)."""
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    with open(path, "w", encoding="utf-8") as f:
        f.write(data)


class Agent:
    """Keeps the store's records (id → record, in file order) and what it removed or
    rewrote: (id, the record before)."""

    def __init__(self, key: str, records: list[dict[str, Any]], write: Callable[[], None]):
        self.key = key
        self.records = {str(r[key]): r for r in records}
        self.initial = set(self.records)  # what the store held before the agent began
        self.write = write
        self.gone: list[tuple[str, dict[str, Any]]] = []
        self.rng = random.Random(5)
        self.made = 0

    def burst(self, new: Callable[[int], dict[str, Any]]) -> set[str]:
        """A few writes, each adding one entry, rewriting one and deleting one (each entry
        touched once per burst); returns the ids touched."""
        touched: set[str] = set()
        for _ in range(self.rng.randint(2, 4)):
            self.made += 1
            record = new(self.made)
            self.records[str(record[self.key])] = record
            touched.add(str(record[self.key]))
            old = [i for i in self.records if i not in touched]
            rewrite, delete = self.rng.sample(old, 2)
            self.gone.append((rewrite, self.records[rewrite]))
            self.records[rewrite] = {
                **self.records[rewrite],
                "content": f"{self.records[rewrite]['content']} (rewritten {self.made})",
            }
            self.gone.append((delete, self.records.pop(delete)))
            touched |= {rewrite, delete}
            self.write()
        return touched


def _run(watcher: Watcher, agent: Agent, new: Callable[[int], dict[str, Any]]) -> None:
    for _ in range(5):
        watcher.wait_for(agent.burst(new))
    assert watcher.stop() == 0


def _recorded(store: str) -> set[tuple[str, str]]:
    svc = Service()
    events = svc.outside.events(svc.stores.open(store), archived=True)
    return {
        (c.id, json.dumps(c.before_raw, sort_keys=True))
        for e in events
        for c in e.changes
        if c.before_raw is not None
    }


def _check_restores(
    cli: Callable[..., CliResult], store: Path, agent: Agent, read: Callable[[], list[Any]]
) -> None:
    recorded = _recorded(str(store))
    for ident, before in agent.gone:
        assert (ident, json.dumps(before, sort_keys=True)) in recorded, ident
    removed = [i for i, _ in agent.gone if i not in agent.records]
    # each as `memtui outside` shows it: the record before the agent's first change (since
    # the last look: memtui first saw the store when watch began); one the agent itself added,
    # then changed and removed: its record before the agent's last change
    expected = dict(agent.gone)
    for ident, before in reversed(agent.gone):
        if ident in agent.initial:
            expected[ident] = before
    args = [a for i in removed for a in ("--outside", i)]
    result = cli("restore", store, *args)
    assert result.code == 0, result.err
    back = {str(r[agent.key]): r for r in read()}
    for ident in removed:
        # byte for byte: the same keys, in the same order, with the same values
        assert json.dumps(back[ident], ensure_ascii=False) == json.dumps(
            expected[ident], ensure_ascii=False
        )


def test_watch_records_every_change_pi_makes_with_atomic_renames(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    store = tmp_path / "memory-store.json"
    doc = json.loads((FIXTURES / "realistic-store.json").read_text(encoding="utf-8"))
    doc["memories"] = doc["memories"][:40]
    _write_pi(store, doc)
    agent = Agent("id", doc["memories"], lambda: None)

    def write() -> None:
        doc["memories"] = list(agent.records.values())
        _write_pi(store, doc)

    agent.write = write
    template = doc["memories"][0]

    def new(n: int) -> dict[str, Any]:
        return {**template, "id": f"mem_agent_{n}", "content": f"the agent's note {n}"}

    watcher = Watcher(str(store))
    _run(watcher, agent, new)

    def read() -> list[Any]:
        return list(json.loads(store.read_text(encoding="utf-8"))["memories"])

    _check_restores(cli, store, agent, read)
    undo = cli("undo", store)
    assert undo.code == 0, undo.err
    assert {r["id"] for r in read()} == set(agent.records)


def test_watch_records_every_change_the_go_system_makes_in_its_jsonl_file(
    tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    store = tmp_path / "memories.jsonl"
    base = [json.loads(line) for line in (FIXTURES / "items.jsonl").read_text().splitlines()]
    records = [{**base[n % len(base)], "id": 100 + n, "content": f"fact {n}"} for n in range(30)]
    for r in records:
        r.pop("supersedes", None)
        r.pop("superseded_by", None)
    agent = Agent("id", records, lambda: None)

    def write() -> None:
        _write_go_jsonl(store, list(agent.records.values()))

    agent.write = write
    write()

    def new(n: int) -> dict[str, Any]:
        return {**records[0], "id": 1000 + n, "content": f"the agent's fact {n}"}

    watcher = Watcher(str(store))
    _run(watcher, agent, new)

    def read() -> list[Any]:
        return [json.loads(line) for line in store.read_text().splitlines() if line]

    _check_restores(cli, store, agent, read)


def test_watch_polls_a_database_and_restores_what_the_go_agent_removed(
    pg_dsn: str,  # noqa: F811
    cli: Callable[..., CliResult],
) -> None:
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        ids = [insert(conn, f"fact {n}") for n in range(6)]
    before = rows(pg_dsn)
    watcher = Watcher(pg_dsn)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        update(conn, ids[0], content="fact 0, rewritten by the agent")
        conn.execute("DELETE FROM long_term_memory WHERE id = %s", [ids[1]])
        tombstone(conn, ids[2])
    watcher.wait_for({str(ids[0]), str(ids[1]), str(ids[2])})
    assert watcher.stop() == 0
    result = cli("restore", pg_dsn, "--since", "2000-01-01T00:00:00Z")
    assert result.code == 0, result.err
    after = rows(pg_dsn)
    for ident in (ids[0], ids[2]):
        assert after[ident]["content"] == before[ident]["content"]
        assert after[ident]["deleted_at"] is None
    # a row deleted outright comes back as a new row (the table numbers its rows itself)
    (back,) = [r for i, r in after.items() if i not in before]
    assert back["content"] == before[ids[1]]["content"]
    history = cli("history", pg_dsn)
    assert "agent outside" in history.out and "user  restore" in history.out
