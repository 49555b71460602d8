"""Hostile input gets one line, exit 1 and the data untouched (issue 15, items 6-10 and 12):
values the JSON writer refuses, times outside Python's range, damaged ledgers and journals,
unusable sidecars, plan paths that are not plan files."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.model import Memory
from memtui.planfile import PLAN_SIZE_LIMIT
from memtui.stores import create_native_store, open_store
from tests.conftest import FIXTURES, NOW, CliResult

Cli = Callable[..., CliResult]
PI_ID = "mem_mx1tnnak_a73461d3"
DEEP = "[" * 300 + "]" * 300
HUGE = "123456789012345678901234567890"  # an integer orjson reads as a float
U64_EDGE = "18446744073709551615"  # the largest integer orjson reads as one


def _one_line_error(result: CliResult, *expect: str) -> None:
    assert result.code == 1, (result.out, result.err)
    lines = result.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("memtui: "), result.err
    for text in expect:
        assert text in lines[0], lines[0]


def _untouched(path: Path) -> Callable[[], bool]:
    data, mtime = path.read_bytes(), path.stat().st_mtime_ns
    return lambda: path.read_bytes() == data and path.stat().st_mtime_ns == mtime


def _native(folder: Path) -> Path:
    memories = [Memory(id=f"n{i}", content=f"native {i}", created_at=NOW) for i in range(3)]
    path = folder / "native.json"
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def _with_odd_values(fmt: str, folder: Path) -> tuple[Path, str, str]:
    """A store whose first entry holds a deep value and integers orjson cannot write;
    returns the path, the id of another entry and the first entry's id."""
    marker = '"@odd@"'
    odd = f'{{"deep": {DEEP}, "huge": {HUGE}, "edge": {U64_EDGE}, "neg": -{U64_EDGE}}}'
    if fmt == "pi":
        value = json.loads((FIXTURES / "example-store.json").read_text())
        value["memories"][0]["odd"] = "@odd@"
        text = json.dumps(value, indent=2, ensure_ascii=False)
        path, other, first = folder / "pi.json", PI_ID, value["memories"][0]["id"]
    elif fmt == "longterm":
        lines = (FIXTURES / "items.jsonl").read_text().splitlines()
        record = json.loads(lines[0])
        record["odd"] = "@odd@"
        text = "\n".join([json.dumps(record, ensure_ascii=False), *lines[1:]]) + "\n"
        path, other, first = folder / "items.jsonl", "2", "1"
    else:
        value = json.loads(_native(folder).read_text())
        value["memories"]["1"]["extra"] = "@odd@"
        text = json.dumps(value)
        path, other, first = folder / "native.json", "n1", "n0"
    path.write_text(text.replace(marker, odd))
    return path, other, first


# -- 6. values the JSON writer cannot write -----------------------------------------------------


@pytest.mark.parametrize("fmt", ["pi", "longterm", "native"])
def test_deep_and_huge_values_are_kept_as_the_file_had_them(
    fmt: str, tmp_path: Path, cli: Cli
) -> None:
    path, other, first = _with_odd_values(fmt, tmp_path)
    original = json.dumps(open_store(path).get(first).to_dict()["extra"], sort_keys=True)

    edited = cli("edit", path, other, "--content", "edited beside odd values")
    assert edited.code == 0, edited.err
    assert cli("edit", path, first, "--importance", "0.25").code == 0
    assert open_store(path).get(other).content == "edited beside odd values"
    kept = open_store(path).get(first).to_dict()["extra"]
    assert json.dumps(kept, sort_keys=True) == original  # nothing clamped, rounded or cut
    assert f'"edge": {U64_EDGE}'.replace(" ", "") in path.read_text().replace(" ", "")

    for args in (["history", "--json"], ["show", first, "--json"], ["list", "--json"]):
        result = cli(args[0], path, *args[1:])
        assert result.code == 0 and "Traceback" not in result.err, result.err
    plan = cli("plan", path, "--out", tmp_path / "plan.json")
    assert plan.code == 0, plan.err
    assert cli("undo", path).code == 0 and cli("undo", path).code == 0
    assert json.dumps(open_store(path).get(first).to_dict()["extra"], sort_keys=True) == original


# -- 7. times outside Python's range ----------------------------------------------------------


@pytest.mark.parametrize("when", ["0001-01-01T00:30:00+01:00", "9999-12-31T23:59:59-01:00"])
@pytest.mark.parametrize("command", ["stats", "list", "plan"])
def test_times_outside_pythons_range_get_one_line(
    when: str, command: str, tmp_path: Path, cli: Cli
) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(
        json.dumps({"id": 1, "content": "x", "created_at": when})
        + "\n"
        + json.dumps({"id": 2, "content": "y"})
        + "\n"
    )
    unchanged = _untouched(path)
    _one_line_error(cli(command, path), str(path), "line 1", "'created_at'", "years 1-9999")
    assert unchanged()


# -- 8. damaged ledgers: reported and skipped for reading, writing refused until repaired ------

JOURNAL_DAMAGE = {
    "no time": {"id": 9, "actor": "user", "kind": "edit", "reason": "", "changes": []},
    "bad time": {"id": 9, "at": "yesterday", "actor": "user", "kind": "edit", "changes": []},
    "id not a number": {"id": "x", "at": "2026-01-01T00:00:00Z", "actor": "u", "kind": "edit"},
    "changes not records": {"id": 9, "at": "2026-01-01T00:00:00Z", "actor": "u", "kind": "e",
                            "changes": [1]},
    "not an object": [1, 2],
}  # fmt: skip


@pytest.mark.parametrize("damage", sorted(JOURNAL_DAMAGE))
def test_a_damaged_native_journal_entry(damage: str, tmp_path: Path, cli: Cli) -> None:
    path = _native(tmp_path)
    assert cli("edit", path, "n1", "--importance", "0.2").code == 0
    value = json.loads(path.read_text())
    value["journal"]["3"] = JOURNAL_DAMAGE[damage]
    path.write_text(json.dumps(value))
    unchanged = _untouched(path)

    for command in ("stats", "list", "history", "backups"):
        result = cli(command, path)
        assert result.code == 0, result.err
        assert "journal entry 3 is damaged" in result.err and "memtui doctor" in result.err
    history = json.loads(cli("history", path, "--json").out)
    assert [tx["kind"] for tx in history] == ["edit", "import"]
    _one_line_error(
        cli("edit", path, "n2", "--importance", "0.3"), "journal entry 3 is damaged", "doctor"
    )
    _one_line_error(cli("undo", path), "journal entry 3 is damaged")
    assert unchanged()

    diagnosis = cli("doctor", path)
    assert diagnosis.code == 1 and "journal entry 3 is damaged" in diagnosis.out
    assert unchanged()
    fixed = cli("doctor", path, "--fix")
    assert fixed.code == 0 and "moved 1 damaged journal entries" in fixed.out, fixed.out
    aside = next((path.parent / "native.json.memtui").glob("journal-damaged-*.json"))
    assert json.loads(aside.read_text()) == [JOURNAL_DAMAGE[damage]]
    assert cli("edit", path, "n2", "--importance", "0.3").code == 0
    assert cli("undo", path).code == 0 and cli("undo", path, "2").code == 0
    assert open_store(path).get("n1").importance == 0.8


@pytest.mark.parametrize(
    "bad_line",
    [b"[1, 2]", b'{"tx": {"id": 1}}', b"\xff\xfe", b'{"tx_id": 1, "state": 5}', b"null"],
)
@pytest.mark.parametrize("where", ["first", "middle"])
def test_a_damaged_sidecar_ledger_line(
    bad_line: bytes, where: str, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("items.jsonl")
    assert cli("edit", path, "1", "--importance", "0.11").code == 0
    assert cli("edit", path, "2", "--importance", "0.22").code == 0
    ledger = path.parent / "items.jsonl.memtui" / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines()
    lines.insert(0 if where == "first" else 2, bad_line)
    ledger.write_bytes(b"\n".join(lines) + b"\n")
    number = 1 if where == "first" else 3
    unchanged, ledger_bytes = _untouched(path), ledger.read_bytes()

    listed = cli("history", path, "--json")
    assert listed.code == 0 and f"line {number} is damaged" in listed.err
    assert [tx["id"] for tx in json.loads(listed.out)] == [2, 1]
    _one_line_error(cli("edit", path, "3", "--importance", "0.3"), f"line {number} is damaged")
    assert unchanged() and ledger.read_bytes() == ledger_bytes

    fixed = cli("doctor", path, "--fix")
    assert fixed.code == 0 and "moved the damaged ledger" in fixed.out, fixed.out
    aside = next(ledger.parent.glob("ledger.jsonl.damaged-*"))
    assert aside.read_bytes() == ledger_bytes
    assert cli("doctor", path).code == 0
    assert [tx["id"] for tx in json.loads(cli("history", path, "--json").out)] == [2, 1]
    assert cli("edit", path, "3", "--importance", "0.3").code == 0
    assert cli("undo", path, "1").code == 0
    assert open_store(path).get("1").importance == 0.8


# -- 9. sidecar trouble: one line naming the path; reading works without the sidecar -----------


def _break_sidecar(how: str, path: Path) -> Path:
    sidecar = path.with_name(path.name + ".memtui")
    if how == "dangling link":
        shutil.rmtree(sidecar)
        sidecar.symlink_to(path.parent / "nowhere")
        return sidecar
    if how == "read-only folder":
        sidecar.chmod(0o500)
        return sidecar
    if how == "backups a file":
        shutil.rmtree(sidecar / "backups")
        (sidecar / "backups").write_text("not a folder")
        return sidecar / "backups"
    if how == "read-only ledger":
        (sidecar / "ledger.jsonl").chmod(0o444)
        return sidecar / "ledger.jsonl"
    if how == "sidecar a file":
        shutil.rmtree(sidecar)
        sidecar.write_text("not a folder")
        return sidecar
    raise AssertionError(how)


@pytest.mark.parametrize(
    "how",
    ["dangling link", "read-only folder", "backups a file", "read-only ledger", "sidecar a file"],
)
def test_an_unusable_sidecar(how: str, fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("example-store.json")
    assert cli("edit", path, PI_ID, "--importance", "0.11").code == 0
    named = _break_sidecar(how, path)
    try:
        unchanged = _untouched(path)
        for command in ("stats", "list", "history", "backups"):
            result = cli(command, path)
            assert result.code == 0, result.err
            assert str(named) in result.err and "Traceback" not in result.err
        _one_line_error(cli("edit", path, PI_ID, "--importance", "0.3"), str(named))
        _one_line_error(cli("undo", path), str(named))
        assert unchanged()
        doctor = cli("doctor", path)
        assert doctor.code == 1 and str(named) in doctor.out
    finally:
        for p in [named, named.parent]:
            if p.exists() and not p.is_symlink():
                p.chmod(p.stat().st_mode | stat.S_IWUSR | stat.S_IXUSR)


def test_junk_in_the_backups_folder_is_ignored(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    assert cli("edit", path, PI_ID, "--importance", "0.11").code == 0
    backups = path.parent / "example-store.json.memtui" / "backups"
    (backups / "20261399T999999999999Z-tx1.json").write_text("junk")
    (backups / "99999999T999999999999Z-tx2.json").write_text("junk")
    listed = cli("backups", path, "--json")
    assert listed.code == 0 and listed.err == ""
    assert len(json.loads(listed.out)) == 1
    assert json.loads(cli("stats", path, "--json").out)["backups"] == 1
    assert cli("edit", path, PI_ID, "--importance", "0.2").code == 0


# -- 10, 12. plan files -----------------------------------------------------------------------


def test_plan_out_in_a_missing_folder(fixture_copy: Callable[[str], Path], cli: Cli) -> None:
    path = fixture_copy("example-store.json")
    _one_line_error(
        cli("plan", path, "--out", "/no/such/dir/p.json"), "/no/such/dir/p.json", "folder"
    )


def test_plans_are_read_only_from_regular_files(
    tmp_path: Path, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy("example-store.json")
    fifo = tmp_path / "plan.fifo"
    os.mkfifo(fifo)
    unchanged = _untouched(path)
    _one_line_error(cli("apply", path, fifo, "--yes"), str(fifo), "not a regular file")
    _one_line_error(cli("apply", path, "/dev/zero", "--yes"), "/dev/zero", "not a regular file")
    _one_line_error(cli("apply", path, tmp_path, "--yes"), str(tmp_path), "is a directory")
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(PLAN_SIZE_LIMIT + 1)  # sparse: no disk, no memory
    _one_line_error(cli("apply", path, huge, "--yes"), str(huge), "plan size limit")
    assert unchanged()


@pytest.mark.parametrize("command", [("stats",), ("list",), ("edit", "--tags", "a", "x")])
def test_stores_are_read_only_from_regular_files(
    command: tuple[str, ...], tmp_path: Path, cli: Cli
) -> None:
    """A FIFO given as the store is named at once (opening it would wait for a writer for
    ever), as is a device."""
    fifo = tmp_path / "store.json"
    os.mkfifo(fifo)
    name, *rest = command
    _one_line_error(cli(name, fifo, *rest), str(fifo), "is a named pipe (FIFO), not a store")
    _one_line_error(cli(name, "/dev/zero", *rest), "/dev/zero", "is a device, not a store file")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
