"""A folder change whose memtui died after deciding it is finished on the next open, but never
over a file the agent rewrote in the meantime: the agent's file stays, memtui's version is set
aside in the sidecar."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import orjson

from memtui.stores import open_store
from tests.conftest import FIXTURES


def _decided_write(folder: Path, name: str, text: bytes) -> Path:
    """What a memtui killed after step 3 leaves: its temp beside the file, the intent decided."""
    target = folder / name
    temp = target.with_name(f".{name}.memtui-new-999999.abcd1234")
    temp.write_bytes(text)
    sidecar = folder.with_name(folder.name + ".memtui")
    sidecar.mkdir(exist_ok=True)
    intent = {
        "pid": 999999,  # no such process: the writer is dead
        "writes": [
            {
                "name": name,
                "temp": temp.name,
                "sha": hashlib.sha256(text).hexdigest(),
                "was": hashlib.sha256(target.read_bytes()).hexdigest(),
            }
        ],
        "removes": [],
    }
    (sidecar / "folder-intent.json").write_bytes(orjson.dumps(intent))
    return sidecar


def test_a_decided_change_is_finished_where_the_file_is_as_it_was(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURES / "claude_code" / "basic", folder)
    new = (folder / "user_role.md").read_bytes().replace(b"---\n\n", b"---\n\nmemtui's words\n", 1)
    _decided_write(folder, "user_role.md", new)
    open_store(str(folder))
    assert (folder / "user_role.md").read_bytes() == new
    assert not list(folder.glob(".*memtui-new-*"))


def test_a_file_the_agent_rewrote_after_the_crash_keeps_the_agents_text(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    shutil.copytree(FIXTURES / "claude_code" / "basic", folder)
    stale = b"---\nname: role\ntype: user\n---\n\nMEMTUI-WRITE (stale)\n"
    sidecar = _decided_write(folder, "user_role.md", stale)
    agent = (folder / "user_role.md").read_bytes() + b"\nAGENT EDIT (later)\n"
    (folder / "user_role.md").write_bytes(agent)

    store = open_store(str(folder))

    assert (folder / "user_role.md").read_bytes() == agent
    [kept] = list(sidecar.glob("not-written-*"))
    assert kept.read_bytes() == stale
    assert not (sidecar / "folder-intent.json").exists()
    assert any("AGENT EDIT" in m.content for m in store.memories())
