"""SIGTERM and SIGHUP to the TUI in a pseudo-terminal (issue 22): the terminal comes back as it
was (the alternate screen left, echo and line mode on), memtui says why it quit, and the store
is what it was before a change under way or what that change made of it."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from fcntl import ioctl
from pathlib import Path

import pytest

from memtui.demo import make_demo_memories
from memtui.stores import create_native_store, open_store
from tests.conftest import NOW

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX terminals only")


def _read_until(fd: int, wanted: bytes, seen: bytearray, limit: float = 60.0) -> bool:
    """Read the terminal until `wanted` shows up (a bound on the wait, not a timing check)."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return wanted in seen
            if not chunk:
                return wanted in seen
            seen += chunk
            if wanted in seen:
                return True
    return wanted in seen


def _drain(fd: int, seen: bytearray) -> None:
    while True:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            return
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return
        if not chunk:
            return
        seen += chunk


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_restores_the_terminal_and_leaves_the_store_before_or_after(
    tmp_path: Path, signum: int
) -> None:
    store = tmp_path / "demo.json"
    create_native_store(store, make_demo_memories(200, 5, NOW), now=NOW, kind="demo", reason="t")
    before = store.read_bytes()
    master, slave = pty.openpty()
    ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 110, 0, 0))
    modes = termios.tcgetattr(slave)
    env = {**os.environ, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"}
    child = subprocess.Popen(
        [sys.executable, "-m", "memtui", str(store)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        start_new_session=True,
    )
    seen = bytearray()
    try:
        assert _read_until(master, b"entries", seen), seen[-2000:]
        os.write(master, b"x")  # delete the highlighted entry: the question opens
        assert _read_until(master, b"Delete?", seen), seen[-2000:]
        # the question takes its answer once it has been quiet: wait for that (not a check)
        time.sleep(0.8)
        os.write(master, b"y")
        child.send_signal(signum)
        end = time.monotonic() + 60
        while child.poll() is None and time.monotonic() < end:
            _drain(master, seen)  # a terminal nobody reads would block the app's writes
        code = child.wait(timeout=5)
        _drain(master, seen)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    after_modes = termios.tcgetattr(slave)
    os.close(master)
    os.close(slave)
    assert code == 128 + signum, bytes(seen[-2000:])
    assert seen.rfind(b"\x1b[?1049l") > seen.rfind(b"\x1b[?1049h") >= 0  # left the alt screen
    lflag = 3
    for flag in (termios.ECHO, termios.ICANON):
        assert after_modes[lflag] & flag == modes[lflag] & flag
    name = signal.Signals(signum).name
    assert f"memtui: {name}: quit".encode() in seen
    now = store.read_bytes()
    if now != before:  # the delete was written whole, as one transaction
        memories = json.loads(now)["memories"]
        assert len(memories) == 200
        assert open_store(store).history()[0].kind != "create"
