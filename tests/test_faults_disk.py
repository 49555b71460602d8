"""A real small filesystem (tmpfs; root only, as CI runs) filled at many steps: every failed
change is one line naming the file and the cause, leaves the store, its ledger and its backups
as they were and no lock or temp file behind, and the same change succeeds once space is
freed."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, CliResult

Cli = Callable[..., CliResult]
ENTRIES = 400  # of about 450 characters each (pi caps content at 500): a 250 kB store


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _pi_store(path: Path) -> str:
    value = json.loads((FIXTURES / "example-store.json").read_text())
    model = value["memories"][0]
    value["memories"] = [
        {**model, "id": f"mem_{n:04d}", "content": f"entry {n} " + "x" * 440}
        for n in range(ENTRIES)
    ]
    path.write_text(json.dumps(value, indent=2))
    return str(value["memories"][0]["id"])


def _free(disk: Path) -> int:
    st = os.statvfs(disk)
    return st.f_bavail * st.f_frsize


def _fill(disk: Path, leave: int) -> Path:
    filler = disk / "filler"
    filler.unlink(missing_ok=True)
    size = max(0, _free(disk) - leave)
    with open(filler, "wb") as f:
        while size > 0:
            try:
                size -= f.write(b"\0" * min(size, 1 << 16))
                f.flush()
            except OSError:
                break
    return filler


def _tree(disk: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(disk)): p.read_bytes()
        for p in sorted(disk.rglob("*"))
        if p.is_file() and p.name != "filler"
    }


def _sweep(disk: Path, cli: Cli, *command: str | Path, step: int = 32 << 10) -> set[str]:
    """Run `command` with ever more free space (`step` more each time) until it succeeds;
    every failure is checked. Returns the write points it failed at."""
    failed_at: set[str] = set()
    leave = 0
    while True:
        before = _tree(disk)
        filler = _fill(disk, leave)
        result = cli(*command)
        filler.unlink()
        if result.code == 0:
            return failed_at
        lines = result.err.strip().splitlines()
        assert result.code == 1 and len(lines) == 1, result.err
        assert "Traceback" not in result.err and "no space left on its device" in lines[0]
        assert lines[0].endswith("; nothing was written")
        named = lines[0].removeprefix("memtui: ").split(":")[0]
        assert named.startswith(str(disk)), lines[0]
        failed_at.add("a backup" if "/backups/" in named else Path(named).name)
        assert _tree(disk) == before  # store, ledger, backups; no lock or temp file
        leave += step
        assert leave < 4 << 20, "the change never fitted"


def test_a_full_disk_at_every_step_is_one_line_and_leaves_everything_as_it_was(
    small_disk: Path, cli: Cli
) -> None:
    store = small_disk / "memory-store.json"
    ident = _pi_store(store)
    assert cli("edit", store, ident, "--importance", "0.5").code == 0  # a ledger and a backup
    text = "changed " + "y" * 440
    failed_at = _sweep(small_disk, cli, "edit", store, ident, "--content", text)
    # the disk filled up at several write points
    assert {"memory-store.json.lock", "a backup", "memory-store.json"} <= failed_at, failed_at
    assert json.loads(cli("show", store, ident, "--json").out)["content"] == text
    # undo too: each failure leaves all as it was, and it is done once it fits
    failed_at = _sweep(small_disk, cli, "undo", store)
    assert {"a backup", "memory-store.json"} <= failed_at, failed_at
    shown = json.loads(cli("show", store, ident, "--json").out)
    assert shown["importance"] == 0.5 and shown["content"].startswith("entry 0 ")
    history = json.loads(cli("history", store, "--json").out)
    assert [tx["kind"] for tx in history] == ["undo", "edit", "edit"]


def test_a_plan_apply_that_did_not_fit_fits_once_space_is_freed(
    small_disk: Path, cli: Cli, tmp_path: Path
) -> None:
    """The issue's case: an apply whose ledger intent is large. Each failure leaves the
    ledger as it was (no intent, no "aborted" mark), so the same apply fits once it can."""
    store = small_disk / "memory-store.json"
    _pi_store(store)
    plan = tmp_path / "plan.json"
    made = cli("plan", store, "--out", plan)
    assert made.code == 0 and ": decay 400 (400 entries touched)" in made.out, made.out
    failed_at = _sweep(small_disk, cli, "apply", store, plan, "--yes", step=64 << 10)
    assert {"a backup", "ledger.jsonl", "memory-store.json"} <= failed_at, failed_at
    history = json.loads(cli("history", store, "--json").out)
    assert [tx["kind"] for tx in history] == ["plan"]
    assert cli("doctor", store).out.count("leftover") == 0
