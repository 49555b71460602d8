"""Odd lock files: a folder named like the lock, a link to nothing, a lock dated in the future
(a clock set back), a stale lock that cannot be removed: one clear line, or broken as stale."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.stores import open_store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
ID = "mem_mx1tnnak_a73461d3"


def _edit(cli: Cli, store: Path) -> CliResult:
    return cli("edit", store, ID, "--importance", "0.25")


def test_a_folder_named_like_the_lock_is_one_line(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store = fixture_copy("example-store.json")
    before = store.read_bytes()
    lock = store.with_name(store.name + ".lock")
    lock.mkdir()
    os.utime(lock, (time.time() - 3600, time.time() - 3600))
    result = _edit(cli, store)
    assert result.code == 1 and result.err.strip().splitlines() == [
        f"memtui: {lock}: is a folder, not a lock file, so memtui cannot lock the store; "
        "remove it (rmdir) if nothing uses it"
    ]
    assert store.read_bytes() == before and lock.is_dir()


def test_a_lock_that_links_to_nothing_is_stale(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store = fixture_copy("example-store.json")
    lock = store.with_name(store.name + ".lock")
    lock.symlink_to(store.parent / "gone")
    result = _edit(cli, store)
    assert result.code == 0, result.err
    assert not os.path.lexists(lock)
    assert open_store(str(store)).get(ID).importance == 0.25


def test_a_lock_dated_in_the_future_is_stale(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    store = fixture_copy("example-store.json")
    lock = store.with_name(store.name + ".lock")
    lock.write_text('{"pid": 999999999, "tool": "pi"}')
    ahead = time.time() + 86400  # written before the clock was set back a day
    os.utime(lock, (ahead, ahead))
    result = _edit(cli, store)
    assert result.code == 0, result.err
    assert open_store(str(store)).get(ID).importance == 0.25


def test_a_fresh_lock_still_waits_then_refuses(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store = fixture_copy("example-store.json")
    lock = store.with_name(store.name + ".lock")
    lock.write_text('{"pid": 1, "tool": "pi"}')
    result = _edit(cli, store)
    assert result.code == 1 and "locked by another process" in result.err


def test_an_immutable_stale_lock_is_one_line(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    if os.geteuid() != 0 or shutil.which("chattr") is None:
        pytest.skip("chattr +i needs root and chattr")
    store = fixture_copy("example-store.json")
    before = store.read_bytes()
    lock = store.with_name(store.name + ".lock")
    lock.write_text('{"pid": 999999999, "tool": "pi"}')
    old = time.time() - 3600
    os.utime(lock, (old, old))
    if subprocess.run(["chattr", "+i", str(lock)], capture_output=True).returncode != 0:
        pytest.skip("this filesystem has no immutable files")
    try:
        result = _edit(cli, store)
    finally:
        subprocess.run(["chattr", "-i", str(lock)], check=True)
    lines = result.err.strip().splitlines()
    assert result.code == 1 and len(lines) == 1, result.err
    assert lines[0].startswith(f"memtui: {lock}: a stale lock memtui cannot remove (")
    assert store.read_bytes() == before
