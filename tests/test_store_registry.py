"""A new file format is its own class and one entry in the registry: opening, committing,
undo and rollback work for it with no change to `Store`."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memtui.model import Memory, Status
from memtui.stores import Change, open_store
from memtui.stores.formats import registry
from memtui.stores.formats.document import Document, FormatDefaults, StoreFormat
from tests.conftest import NOW

MAGIC = b"# memories, one a line\n"


class LinesFormat(FormatDefaults):
    """A toy format: a header line, then `id<TAB>content` per line."""

    name = "lines"
    file_mode = 0o644

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        return None  # never a JSON value

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        if not data.startswith(MAGIC):
            return None
        rows = [line.split("\t", 1) for line in data[len(MAGIC) :].decode().splitlines()]
        return self.parse(rows, path)

    def parse(self, value: Any, path: Path) -> Document:
        raws = {ident: {"id": ident, "content": text} for ident, text in value}
        return Document({i: self.decode(r, path) for i, r in raws.items()}, raws, {})

    def render(self, doc: Document, now: datetime | None) -> bytes:
        lines = [f"{r['id']}\t{r['content']}\n" for r in (doc.raws[i] for i in doc.memories)]
        return MAGIC + "".join(lines).encode()

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        return Memory(raw["id"], raw["content"])

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        return {"id": memory.id, "content": memory.content} if self.keeps(memory) else None

    def keeps(self, memory: Memory) -> bool:
        return memory.status is Status.ACTIVE

    def successor(self, raw: dict[str, Any], current: dict[str, Any] | None) -> dict[str, Any]:
        return raw

    def record_image(self, image: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any] | None:
        return raw

    def new_id(self, doc: Document, now: datetime) -> str:
        return f"l{len(doc.memories) + 1}"


@pytest.fixture
def lines_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    fmt: StoreFormat = LinesFormat()
    monkeypatch.setitem(registry.FORMATS, fmt.name, fmt)


@pytest.mark.usefixtures("lines_registered")
def test_a_registered_format_is_read_changed_and_undone(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    original = MAGIC + b"l1\tThe build uses pytest\nl2\tDeploys go out on Fridays\n"
    path.write_bytes(original)
    store = open_store(str(path))
    assert store.format_name == "lines"
    assert [m.content for m in store.memories()] == [
        "The build uses pytest",
        "Deploys go out on Fridays",
    ]
    old = store.get("l2")
    added = Memory(store.new_id(NOW), "Reviews need two approvals")
    store.commit(
        [Change(old, old.with_(content="Deploys go out on Thursdays")), Change(None, added)],
        actor="user",
        kind="edit",
        reason="test",
        now=NOW,
    )
    assert path.read_bytes() == original.replace(b"Fridays", b"Thursdays") + (
        b"l3\tReviews need two approvals\n"
    )
    store.undo(now=NOW)
    assert path.read_bytes() == original
    store.rollback(store.backups()[0].name, now=NOW)
    assert b"Thursdays" in path.read_bytes()


def test_without_the_registry_entry_the_file_is_no_store(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(MAGIC + b"l1\tx\n")
    with pytest.raises(Exception, match="not valid JSON"):
        open_store(str(path))
