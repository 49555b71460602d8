"""Stores as their agents (or people) left them round-trip exactly, and memtui's own files are
never turned against the store (issue 15, items 13-17): odd ids, fractional times, read-only
stores, line endings, planted links, ids that look like options, backups memtui did not write,
a sidecar shared by two stores."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.jsonout import NumberText, dumps, dumps_text, read_number
from memtui.stores import open_store
from memtui.stores.file import files as files_module
from tests.conftest import FIXTURES, CliResult, assert_same_but_versions

Cli = Callable[..., CliResult]
PI_ID = "mem_mx1tnnak_a73461d3"


def _edit_and_undo(cli: Cli, path: Path, ident: str) -> None:
    before = path.read_bytes()
    edited = cli("edit", path, "--importance", "0.33", "--", ident)
    assert edited.code == 0, edited.err
    assert open_store(path).get(ident).importance == 0.33
    assert cli("undo", path).code == 0
    assert path.read_bytes() == before


# -- 13. ids and times round-trip as written --------------------------------------------------

ODD_IDS = ['"007"', '"01"', '"\u0663"', '"\uff14\uff12"', '"\u00b2"', '"42"', "42", '"-h"']


@pytest.mark.parametrize("spelled", ODD_IDS)
def test_longterm_ids_round_trip_as_written(spelled: str, tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "items.jsonl"
    lines = (FIXTURES / "items.jsonl").read_text().splitlines()
    lines[2] = lines[2].replace('"id": 3,', f'"id": {spelled},', 1)
    lines[3] = lines[3].rstrip("}") + f', "supersedes": [{spelled}, 1]}}'
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ident, before = str(json.loads(spelled)), path.read_bytes()
    assert cli("edit", path, "--importance", "0.33", "--", ident).code == 0
    edited = [json.loads(line) for line in path.read_text().splitlines()]
    assert edited[2]["importance"] == 0.33
    for written in (edited[2]["id"], edited[3]["supersedes"][0]):
        assert written == json.loads(spelled) and type(written) is type(json.loads(spelled))
    assert cli("undo", path).code == 0
    assert_same_but_versions(path.read_bytes(), before)
    assert cli("plan", path, "--json").code == 0
    assert cli("chain", path, "--", ident).code == 0


def test_pi_fractional_millisecond_times_are_editable(tmp_path: Path, cli: Cli) -> None:
    value = json.loads((FIXTURES / "example-store.json").read_text())
    entry = value["memories"][1]
    entry["createdAt"] = entry["createdAt"] + 0.5
    entry["lastInjectedAt"] = entry["lastInjectedAt"] + 0.123
    path = tmp_path / "memory-store.json"
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False))
    _edit_and_undo(cli, path, entry["id"])
    assert json.loads(path.read_text())["memories"][1]["createdAt"] == entry["createdAt"]


# -- 14. a read-only store is refused ---------------------------------------------------------


@pytest.mark.parametrize("name", ["example-store.json", "items.jsonl"])
def test_a_read_only_store_is_refused(
    name: str, fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    path = fixture_copy(name)
    ident = PI_ID if name.endswith(".json") else "1"
    path.chmod(0o444)  # root could write it anyway: the mode bits say it must not be
    data, mtime = path.read_bytes(), path.stat().st_mtime_ns
    result = cli("edit", path, ident, "--importance", "0.3")
    assert result.code == 1 and result.err.count("\n") == 1
    assert str(path) in result.err and "read-only (mode 0444)" in result.err
    assert path.read_bytes() == data and path.stat().st_mtime_ns == mtime
    assert path.stat().st_mode & 0o777 == 0o444
    assert not path.with_name(path.name + ".memtui").exists()
    assert cli("stats", path).code == 0


# -- 17. line endings and untouched bytes -----------------------------------------------------


@pytest.mark.parametrize("name", ["example-store.json", "items.jsonl"])
def test_crlf_files_keep_their_line_endings(name: str, tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / name
    data = (FIXTURES / name).read_bytes().replace(b"\n", b"\r\n")
    if name.endswith(".jsonl"):
        data = data.replace(b"\r\n", b"\r\n\r\n", 2)  # blank lines stay too
    path.write_bytes(data)
    ident = PI_ID if name.endswith(".json") else "5"
    assert cli("edit", path, ident, "--content", "edited").code == 0
    edited = path.read_bytes()
    assert edited.count(b"\n") == edited.count(b"\r\n") == data.count(b"\r\n")
    assert cli("undo", path).code == 0
    if name.endswith(".jsonl"):
        assert_same_but_versions(path.read_bytes(), data)
    else:
        assert path.read_bytes() == data


def test_a_pi_file_keeps_its_trailing_newline(tmp_path: Path, cli: Cli) -> None:
    path = tmp_path / "memory-store.json"
    path.write_bytes((FIXTURES / "example-store.json").read_bytes().rstrip() + b"\n")
    _edit_and_undo(cli, path, PI_ID)


# -- 16. a link planted at the temp file's name is never followed -----------------------------


def test_a_planted_link_at_the_temp_name_is_not_followed(
    fixture_copy: Callable[[str], Path], cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = fixture_copy("example-store.json")
    victim = path.parent / "victim.txt"
    victim.write_text("not yours")
    planted = path.with_name(f".{path.name}.memtui-tmp-{os.getpid()}.{'00' * 4}")
    planted.symlink_to(victim)
    real_urandom, real_open = os.urandom, os.open
    tried: list[str] = []

    def zeros_until_the_planted_name_is_tried(n: int) -> bytes:
        return real_urandom(n) if tried else b"\0" * n

    def watching_open(file: str | Path, *args: int, **kwargs: int) -> int:
        if Path(file) == planted:
            tried.append(str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(files_module.os, "urandom", zeros_until_the_planted_name_is_tried)
    monkeypatch.setattr(files_module.os, "open", watching_open)
    result = cli("edit", path, PI_ID, "--content", "edited")
    monkeypatch.undo()
    assert tried, "the edit never tried the planted name"
    assert result.code == 0, result.err
    assert victim.read_text() == "not yours"
    assert not path.is_symlink() and open_store(path).get(PI_ID).content == "edited"
    assert planted.is_symlink()  # left as found (not memtui's to remove)


# -- 15. ids like options, backups memtui did not write, a shared sidecar ----------------------


def test_an_id_that_looks_like_an_option_after_double_dash(tmp_path: Path, cli: Cli) -> None:
    value = json.loads((FIXTURES / "example-store.json").read_text())
    value["memories"][1]["id"] = "-h"
    path = tmp_path / "memory-store.json"
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False))
    shown = cli("show", path, "--json", "--", "-h")
    assert shown.code == 0 and json.loads(shown.out)["id"] == "-h"
    edited = cli("edit", path, "--content", "edited", "--", "-h")
    assert edited.code == 0 and "edited -h in transaction 1" in edited.out
    assert open_store(path).get("-h").content == "edited"
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert "memtui edit STORE --importance 0.5 -- -h" in readme


def test_pruning_removes_only_backups_memtui_recorded(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[store]\nbackups = 2\n")
    path = fixture_copy("example-store.json")
    backups = path.parent / "example-store.json.memtui" / "backups"
    backups.mkdir(parents=True)
    foreign = backups / "20200101T000000000000Z-tx1.json"
    foreign.write_text("someone else's file")
    for n in range(4):
        assert cli("--config", config, "edit", path, PI_ID, "--importance", f"0.{n + 1}").code == 0
    assert foreign.read_text() == "someone else's file"
    recorded = {tx["backup"] for tx in json.loads(cli("history", path, "--json").out)}
    kept = {p.name for p in backups.iterdir()} - {foreign.name}
    assert len(kept) == 2 and kept <= recorded


def test_a_sidecar_shared_through_a_link_is_refused(tmp_path: Path, cli: Cli) -> None:
    first, second = tmp_path / "a" / "items.jsonl", tmp_path / "b" / "items.jsonl"
    for path in (first, second):
        path.parent.mkdir()
        path.write_bytes((FIXTURES / "items.jsonl").read_bytes())
    assert cli("edit", first, "1", "--importance", "0.11").code == 0
    second.with_name("items.jsonl.memtui").symlink_to(first.with_name("items.jsonl.memtui"))
    data = second.read_bytes()

    history = cli("history", second, "--json")
    assert history.code == 0 and json.loads(history.out) == []
    assert f"holds the history of {first}" in history.err
    refused = cli("edit", second, "2", "--importance", "0.2")
    assert refused.code == 1 and f"holds the history of {first}" in refused.err
    assert second.read_bytes() == data
    assert cli("doctor", second, "--fix").code == 1  # a link: not memtui's to re-assign
    assert [tx["id"] for tx in json.loads(cli("history", first, "--json").out)] == [1]


def test_a_store_copied_with_its_sidecar_adopts_it(tmp_path: Path, cli: Cli) -> None:
    first = tmp_path / "a" / "items.jsonl"
    first.parent.mkdir()
    first.write_bytes((FIXTURES / "items.jsonl").read_bytes())
    assert cli("edit", first, "1", "--importance", "0.11").code == 0
    copy = tmp_path / "b"
    os.system(f"cp -a {first.parent} {copy}")
    second = copy / "items.jsonl"
    assert cli("edit", second, "2", "--importance", "0.2").code == 1
    fixed = cli("doctor", second, "--fix")
    assert fixed.code == 0 and f"now belongs to {second}" in fixed.out
    assert cli("edit", second, "2", "--importance", "0.2").code == 0
    assert [tx["id"] for tx in json.loads(cli("history", second, "--json").out)] == [2, 1]
    # moving a store with its sidecar needs nothing: the old path no longer exists
    moved = tmp_path / "c"
    os.rename(copy, moved)
    assert cli("edit", moved / "items.jsonl", "3", "--importance", "0.3").code == 0


# -- numbers beyond a double's range --------------------------------------------------------


def test_a_number_beyond_a_double_is_written_back_as_the_file_spelled_it(
    tmp_path: Path, cli: Cli
) -> None:
    """`1e400` reads as inf; orjson would write it back as null and the standard library as
    Infinity (not JSON): every write keeps its text, and every view shows it."""
    path = tmp_path / "store.json"
    assert cli("import", FIXTURES / "example-store.json", path).code == 0
    data = path.read_bytes()
    plain = b'"extra":{"sourceSession":"sess-1"}'
    assert plain in data
    path.write_bytes(
        data.replace(plain, b'"extra":{"sourceSession":"sess-1","odd":[1e400,-1E+400]}', 1)
    )
    odd = next(m.id for m in open_store(path).memories() if "odd" in m.extra)
    other = next(m.id for m in open_store(path).memories() if "odd" not in m.extra)
    before = path.read_bytes()
    assert cli("edit", path, "--tags", "x", "--", other).code == 0
    assert b'"odd":[1e400,-1E+400]' in path.read_bytes()
    assert cli("edit", path, "--tags", "y", "--", odd).code == 0
    assert b'"odd":[1e400,-1E+400]' in path.read_bytes()
    shown = cli("show", path, odd)
    assert "odd  [1e400, -1E+400]" in shown.out
    assert '"odd": [\n      1e400,\n      -1E+400\n    ]' in cli("show", path, "--json", odd).out
    assert cli("plan", path, "--json").code == 0
    assert cli("undo", path).code == 0
    undone = cli("undo", path, "2")
    assert undone.code == 0, undone.err
    assert_same_but_versions(
        path.read_bytes().split(b',"journal"')[0], before.split(b',"journal"')[0]
    )
    assert cli("compact", path, "--keep", "1").code == 0  # the file written anew
    assert b'"odd":[1e400,-1E+400]' in path.read_bytes()


_NUMBER_TEXTS = st.sampled_from(["1e400", "-1E+400", "2.5e999", "-9e9999"]).map(NumberText)
_WITH_NUMBER_TEXTS = st.recursive(
    st.none() | st.integers(-(2**70), 2**70) | st.text(max_size=4) | _NUMBER_TEXTS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=8,
)


@settings(max_examples=200, deadline=None)
@given(_WITH_NUMBER_TEXTS)
def test_every_writer_spells_a_number_beyond_a_double_as_read(value: object) -> None:
    """orjson's writer and the standard library's (integers past 64 bits send a value to the
    second) both give back the texts read, and read back the same (read as the checked
    reader reads: orjson reads integers past 64 bits as doubles)."""
    expected = dumps_text(value)
    numbers = [t for t in ("1e400", "-1E+400", "2.5e999", "-9e9999") if t in repr(_texts(value))]
    for text in (dumps(value), dumps_text(value).encode(), dumps_text(value, spaced=True).encode()):
        read = json.loads(text.decode("utf-8", "surrogatepass"), parse_float=read_number)
        assert dumps_text(read) == expected
        assert b"Infinity" not in text
        for number in numbers:
            assert number.encode() in text


def _texts(value: object) -> list[str]:
    if isinstance(value, NumberText):
        return [value.text]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []
