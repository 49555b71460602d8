from __future__ import annotations

import re
import shutil
import socket
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import textual._wait

from memtui.cli import main
from memtui.model import Memory

FIXTURES = Path(__file__).parent / "fixtures"

# Pilot waits for the app to go idle (after each key, twice, and each pause) by sleeping in
# 20 ms steps until a step used under 5 % CPU: the same test of idleness in 5 ms steps
textual._wait.SLEEP_GRANULARITY = 0.005
textual._wait.SLEEP_IDLE = textual._wait.SLEEP_GRANULARITY / 20
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No test reads or writes the real user's config or data."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("MEMTUI_CONFIG", str(home / "config.toml"))
    monkeypatch.setenv("MEMTUI_DATA", str(home / "data"))
    monkeypatch.setenv("MEMTUI_NOW", "2026-11-30T12:00:00Z")
    monkeypatch.delenv("MEMTUI_STORE", raising=False)


_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests reach 127.0.0.1 and nothing else."""
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def check(sock: socket.socket, address: object) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if host not in _LOOPBACK:
                raise OSError(f"a test tried to reach {host}; only 127.0.0.1 is allowed")

    def connect(sock: socket.socket, address: object) -> None:
        check(sock, address)
        return real_connect(sock, address)  # type: ignore[arg-type]

    def connect_ex(sock: socket.socket, address: object) -> int:
        check(sock, address)
        return real_connect_ex(sock, address)  # type: ignore[arg-type]

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)


@pytest.fixture
def fixture_copy(tmp_path: Path) -> Callable[[str], Path]:
    """A writable copy of a fixture file in a fresh folder."""

    def copy(name: str) -> Path:
        dest = tmp_path / name
        shutil.copyfile(FIXTURES / name, dest)
        dest.chmod(0o600 if name.endswith(".json") else 0o644)
        return dest

    return copy


class CliResult:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., CliResult]:
    def run(*args: str | Path) -> CliResult:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run


_VERSION = re.compile(rb'"version": ?(\d+)')


def assert_same_but_versions(now: bytes, then: bytes) -> None:
    """A longterm file is what it was, byte for byte, but for each record's optimistic
    `version`, which every change memtui makes moves forward (undo and rollback too)."""
    assert _VERSION.sub(b'"version": N', now) == _VERSION.sub(b'"version": N', then)
    assert all(
        int(a) >= int(b) for a, b in zip(_VERSION.findall(now), _VERSION.findall(then), strict=True)
    )


def unversioned(memories: dict[str, Memory]) -> dict[str, Memory]:
    """Entries with their version counters left out of the comparison."""
    return {i: m.with_(version=None) for i, m in memories.items()}


@pytest.fixture(autouse=True)
def questions_answer_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A question takes its answer as soon as it is shown: Pilot presses keys faster than a
    person types. The tests of that wait (test_tui_keys.py) set it back."""
    from memtui.tui.modals import Question

    monkeypatch.setattr(Question, "settle", 0.0)
    from memtui.tui.app import MemtuiApp

    monkeypatch.setattr(MemtuiApp, "burst", 0.0)  # nor a key that follows another at once
