"""Command-line text whatever the locale: a C locale without UTF-8 mode still stores real CJK
(never lone surrogates), bytes that are not UTF-8 are refused in one line, and output an
encoding cannot hold is escaped, never a crash."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.stores import open_store

C_LOCALE = {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
TEXT = "中文记忆 测试"


def _memtui(*args: str | bytes, **env: str) -> subprocess.CompletedProcess[bytes]:
    environ = {**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent), **env}
    environ.pop("PYTHONIOENCODING", None)
    environ.update(env)
    return subprocess.run(
        [sys.executable, "-m", "memtui", *args], capture_output=True, env=environ, timeout=120
    )


def test_cjk_in_a_c_locale_is_stored_as_cjk_and_found(
    fixture_copy: Callable[[str], Path],
) -> None:
    store = fixture_copy("example-store.json")
    added = _memtui("add", str(store), TEXT, "--tags", "语言", **C_LOCALE)
    assert added.returncode == 0, added.stderr
    assert b"Traceback" not in added.stderr
    new = [m for m in open_store(str(store)).memories() if m.content == TEXT]
    assert len(new) == 1 and new[0].tags == ("语言",)
    assert "\\udc" not in store.read_text(encoding="utf-8")

    listed = _memtui("list", str(store), "--query", "记忆", **C_LOCALE)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.decode("ascii").splitlines()
    assert len(lines) == 1 and "\\u4e2d\\u6587" in lines[0]  # escaped, as ASCII can hold it
    shown = _memtui("show", str(store), new[0].id, "--json", **C_LOCALE)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["content"] == TEXT


def test_bytes_that_are_not_utf8_are_refused_in_one_line(
    fixture_copy: Callable[[str], Path],
) -> None:
    store = fixture_copy("example-store.json")
    before = store.read_bytes()
    refused = _memtui("add", str(store), b"caf\xe9 latin-1", **C_LOCALE)
    err = refused.stderr.decode("ascii", "replace").strip().splitlines()
    assert refused.returncode == 2 and len(err) == 1, err
    assert err[0] == (
        "memtui: 'caf\\xe9 latin-1' on the command line is not UTF-8 text (is the terminal's "
        "encoding UTF-8?); nothing was written"
    )
    assert store.read_bytes() == before


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_output_in_an_encoding_without_cjk_is_escaped(
    fixture_copy: Callable[[str], Path], encoding: str
) -> None:
    store = fixture_copy("items.jsonl")  # Chinese memories
    for command in (("list", str(store)), ("show", str(store), "1"), ("stats", str(store))):
        result = _memtui(*command, PYTHONIOENCODING=encoding)
        assert result.returncode == 0, result.stderr
        assert b"Traceback" not in result.stderr
        assert b"\\u" in result.stdout


def test_the_service_never_writes_a_lone_surrogate(fixture_copy: Callable[[str], Path]) -> None:
    from memtui.errors import MemtuiError
    from memtui.service import EntryEdit, Service

    path = fixture_copy("example-store.json")
    before = path.read_bytes()
    svc = Service()
    store = svc.stores.open(path)
    with pytest.raises(MemtuiError, match="the content is not UTF-8 text"):
        svc.entries.new_memory(store, "caf\udce9")
    with pytest.raises(MemtuiError, match="a tag is not UTF-8 text"):
        svc.entries.edit(store, store.memories()[0].id, EntryEdit(tags=("\ud83d",)))
    assert path.read_bytes() == before
