"""Bad input gets one clear line, exit status 1, and the file untouched; never a traceback."""

from __future__ import annotations

import builtins
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memtui.demo import make_demo_memories
from memtui.stores import create_native_store
from tests.conftest import FIXTURES, NOW, CliResult

GOOD_ENTRY = json.loads((FIXTURES / "example-store.json").read_text())["memories"][0]


def _pi(entries: list[Any]) -> bytes:
    return json.dumps({"version": 1, "memories": entries}).encode()


BAD_FILES: dict[str, tuple[bytes, str]] = {
    "truncated": ((FIXTURES / "example-store.json").read_bytes()[:700], "not valid JSON"),
    "memories-not-a-list": (b'{"version": 1, "memories": {"a": 1}}', "'memories' must be a list"),
    # pi stores with odd entries open as pi opens them (tests/test_pi_load.py)
    "nan": (b'{"version": 1, "memories": [{"content": "x", "potency": NaN}]}', "not valid JSON"),
    "invalid-utf8": (b'{"version": 1, "memories": [{"content": "\xff\xfe"}]}', "not valid UTF-8"),
    "empty": (b"", "empty"),
    "not-a-store": (b'{"hello": "world"}', "not a memory store"),
    "jsonl-bad-line": (
        (FIXTURES / "items.jsonl").read_bytes() + b'{"id": 99, "content": \n',
        "line 13: not valid JSON",
    ),
    "longterm-bad-time": (
        b'{"id": 1, "content": "x", "created_at": "yesterday"}\n{"id": 2, "content": "y"}\n',
        "'created_at' is not an RFC 3339 time",
    ),
}


def _assert_one_line_error(result: CliResult, expect: str, code: int = 1) -> None:
    assert result.code == code
    assert result.out == ""
    lines = result.err.strip().splitlines()
    assert len(lines) == 1, result.err
    assert lines[0].startswith("memtui: ") and expect in lines[0], lines[0]
    assert "Traceback" not in result.err


@pytest.mark.parametrize("case", sorted(BAD_FILES))
@pytest.mark.parametrize("command", [["stats"], ["list"], ["edit", "ID", "--importance", "0.5"]])
def test_bad_store_file(
    case: str, command: list[str], tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    data, expect = BAD_FILES[case]
    path = tmp_path / "store.json"
    path.write_bytes(data)
    stamp = path.stat().st_mtime_ns
    args = [command[0], path, *command[1:]]
    _assert_one_line_error(cli(*args), expect)
    assert path.read_bytes() == data and path.stat().st_mtime_ns == stamp
    assert not (tmp_path / "store.json.memtui").exists()


def test_a_directory(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    _assert_one_line_error(cli("stats", tmp_path), "is a directory")


def test_a_missing_file(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    _assert_one_line_error(cli("list", tmp_path / "nope.json"), "no such file")


def test_an_unreadable_file(
    tmp_path: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "store.json"
    path.write_bytes((FIXTURES / "example-store.json").read_bytes())
    path.chmod(0)
    if os.geteuid() == 0:  # root reads anything: make open() refuse as it would for a user
        real_open = builtins.open

        def refusing_open(file: Any, *args: Any, **kwargs: Any) -> Any:
            if Path(file) == path:
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)

        monkeypatch.setattr(builtins, "open", refusing_open)
    _assert_one_line_error(cli("stats", path), "permission denied")


def test_unknown_id_and_bad_values(
    fixture_copy: Callable[[str], Path], cli: Callable[..., CliResult]
) -> None:
    path = fixture_copy("example-store.json")
    data = path.read_bytes()
    _assert_one_line_error(cli("show", path, "mem_nope"), "no memory with id 'mem_nope'")
    _assert_one_line_error(
        cli("edit", path, "mem_mx1tnnak_a73461d3", "--importance", "7"), "between 0 and 1", 2
    )
    _assert_one_line_error(
        cli("edit", path, "mem_mx1tnnak_a73461d3", "--status", "sleeping"), "unknown status", 2
    )
    _assert_one_line_error(
        cli("edit", path, "mem_mx1tnnak_a73461d3", "--content", "x" * 600), "cap content at 500"
    )
    _assert_one_line_error(cli("rollback", path, "nothing-like-this"), "no backup named")
    _assert_one_line_error(cli("undo", path), "nothing to undo")
    assert path.read_bytes() == data


def test_usage_errors_exit_2(cli: Callable[..., CliResult], tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as exc:
        cli("list")
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        cli("undo", tmp_path / "s.json", "not-a-number")
    assert exc.value.code == 2


def test_real_process_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    path.write_bytes(BAD_FILES["truncated"][0])
    proc = subprocess.run(
        [sys.executable, "-m", "memtui", "list", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)},
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("memtui: ") and proc.stderr.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ("list", "{store}", "--status", "bogus"),
        ("list", "{store}", "--sort", "bogus"),
        ("edit", "{store}", "X", "--importance", "2"),
        ("add", "{store}", "hi", "--importance", "5"),
        ("compact", "{store}", "--keep", "0"),
        ("pairs", "{store}", "--threshold", "2"),
        ("pairs", "{store}", "--limit", "-1"),
        ("plan", "{store}", "--now", "yesterday"),
        ("decay", "{store}", "--days", "0"),
        ("calibrate", "{store}", "--precision", "2"),
        ("rollback", "{store}"),
    ],
)
def test_a_bad_option_value_is_a_usage_error_exit_2(
    args: tuple[str, ...], tmp_path: Path, cli: Callable[..., CliResult]
) -> None:
    store = tmp_path / "s.json"
    create_native_store(store, make_demo_memories(20, 3, NOW), now=NOW, kind="demo", reason="t")
    before = store.read_bytes()
    result = cli(*(a.format(store=store) for a in args))
    assert result.code == 2
    assert result.err.startswith("memtui: ") and result.err.count("\n") == 1
    assert store.read_bytes() == before


def test_a_runtime_failure_stays_exit_1(tmp_path: Path, cli: Callable[..., CliResult]) -> None:
    store = tmp_path / "s.json"
    create_native_store(store, make_demo_memories(20, 3, NOW), now=NOW, kind="demo", reason="t")
    assert cli("show", store, "no-such-id").code == 1
    assert cli("list", tmp_path / "missing.json").code == 1


def test_apply_without_a_terminal_needs_yes(
    tmp_path: Path, cli: Callable[..., CliResult], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.json"
    create_native_store(store, make_demo_memories(40, 3, NOW), now=NOW, kind="demo", reason="t")
    plan = tmp_path / "plan.json"
    assert cli("plan", store, "--out", plan).code == 0
    before = store.read_bytes()
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))  # a pipe, not someone answering
    refused = cli("apply", store, plan)
    assert refused.code == 2 and "add --yes" in refused.err and refused.err.count("\n") == 1
    assert store.read_bytes() == before
    assert cli("apply", store, plan, "--yes").code == 0
    assert store.read_bytes() != before
