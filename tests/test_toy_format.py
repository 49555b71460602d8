"""A new store format is its module and one registry line: a toy "one entry a line" text
format, declared here with its traits, is opened, edited, merged and undone through the
service and the command line with nothing else changed (docs/formats.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from memtui.errors import MemtuiError
from memtui.model import Memory, Status
from memtui.service import EntryEdit, Service
from memtui.stores.formats import registry
from memtui.stores.formats.document import Document, FormatDefaults
from memtui.traits import FormatTraits, IdStyle
from tests.conftest import NOW, CliResult

MAGIC = b"# one memory a line\n"
ORIGINAL = (
    MAGIC + b"t1: The build uses pytest\nt2: Deploys go out on Fridays\nt3: Tabs, not spaces\n"
)


class OneALine(FormatDefaults):
    """`<id>: <content>` a line under a header line; text only, active entries only."""

    name = "lines"
    file_mode = 0o644
    traits = FormatTraits(
        content_cap=200,
        keeps=frozenset({Status.ACTIVE}),
        ids=IdStyle("t", "none", 6),
        default_profile="longterm",
        has_users=False,
        lineage_in_store=False,
    )

    def recognise(self, value: Any, data: bytes, path: Path) -> Document | None:
        return None  # never a JSON value

    def recognise_text(self, data: bytes, path: Path) -> Document | None:
        if not data.startswith(MAGIC):
            return None
        lines = data[len(MAGIC) :].decode().splitlines()
        return self.parse([line.split(": ", 1) for line in lines], path)

    def parse(self, value: Any, path: Path) -> Document:
        raws = {ident: {"id": ident, "content": text} for ident, text in value}
        return Document({i: self.decode(r, path) for i, r in raws.items()}, raws, {})

    def render(self, doc: Document, now: datetime | None) -> bytes:
        rows = (doc.raws[ident] for ident in doc.memories)
        return MAGIC + "".join(f"{r['id']}: {r['content']}\n" for r in rows).encode()

    def decode(self, raw: dict[str, Any], path: Path) -> Memory:
        return Memory(raw["id"], raw["content"])

    def encode(self, memory: Memory, base: dict[str, Any] | None) -> dict[str, Any] | None:
        out = {"id": memory.id, "content": memory.content}
        return (base if base == out else out) if self.keeps(memory) else None


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    fmt = OneALine()
    monkeypatch.setitem(registry.FORMATS, fmt.name, fmt)  # the one registry line
    path = tmp_path / "notes.txt"
    path.write_bytes(ORIGINAL)
    return path


def test_the_service_opens_edits_merges_and_undoes_a_new_format(toy: Path) -> None:
    svc = Service(clock=lambda: NOW)
    store = svc.stores.open(toy)
    assert (store.format_name, len(store)) == ("lines", 3)
    assert svc.profiles.profile(store).name == "longterm"  # its traits' default profile

    svc.entries.edit(store, "t2", EntryEdit(content="Deploys go out on Thursdays"))
    added = svc.entries.new_memory(store, "Reviews need two approvals")
    svc.entries.add_memory(store, added)
    assert added.id.startswith("t") and len(added.id) == 7  # its traits' id style
    assert toy.read_bytes() == ORIGINAL.replace(b"Fridays", b"Thursdays") + (
        f"{added.id}: Reviews need two approvals\n".encode()
    )

    # a merge's members leave a file that keeps active entries only
    assert not svc.entries.keeps_merged(store)
    merge = svc.merges.merge(store, ["t1", "t3"], content="pytest builds it; tabs indent it")
    merged = merge.details["merged"]
    assert merged.startswith("t") and {"t1", "t3"}.isdisjoint(m.id for m in store.memories())
    assert f"{merged}: pytest builds it; tabs indent it\n".encode() in toy.read_bytes()

    for _ in range(3):
        svc.history.undo(store)
    assert toy.read_bytes() == ORIGINAL
    assert [m.content for m in svc.stores.open(toy).memories()][1] == "Deploys go out on Fridays"


def test_a_plan_for_a_new_format_uses_its_profile_and_ids_and_is_undone(toy: Path) -> None:
    toy.write_bytes(
        MAGIC + b"t1: The user lives in Berlin and works at a bank\n"
        b"t2: The user lives in Berlin and works at a bank now\n"
        b"t3: Tabs, not spaces\n"
        b"t4: the user lives in berlin, works at a bank\n"
    )
    before = toy.read_bytes()
    svc = Service(clock=lambda: NOW)
    store = svc.stores.open(toy)
    plan = svc.plans.plan(store, svc.profiles.profile(store))
    assert plan.profile == "longterm"
    [merge] = [a for a in plan.actions if a.kind == "merge"]
    [created] = [m for m in merge.after if m.id not in {b.id for b in merge.before}]
    assert created.id.startswith("t") and len(created.id) == 7
    svc.plans.apply(store, plan)
    assert f"{created.id}: ".encode() in toy.read_bytes()
    assert [m.id for m in store.memories()] == ["t3", created.id]  # members left the file
    svc.history.undo(store)
    assert toy.read_bytes() == before


def test_its_traits_refuse_what_it_cannot_hold_and_nothing_is_written(toy: Path) -> None:
    svc = Service(clock=lambda: NOW)
    store = svc.stores.open(toy)
    with pytest.raises(MemtuiError, match="201 characters; lines stores cap content at 200"):
        svc.entries.new_memory(store, "x" * 201)
    with pytest.raises(MemtuiError, match="lines store's entries carry no user"):
        svc.entries.new_memory(store, "Ask Dana", user_id="dana")
    refusal = svc.entries.status_refusal(store, store.get("t1"), Status.ARCHIVED)
    assert refusal is not None and refusal.startswith("lines stores hold active entries only")
    assert toy.read_bytes() == ORIGINAL and store.transactions() == []


def test_the_command_line_deletes_and_undoes_in_a_new_format(
    toy: Path, cli: Callable[..., CliResult]
) -> None:
    deleted = cli("edit", toy, "t2", "--status", "deleted")
    assert deleted.code == 0, deleted.err
    assert "lines keeps only active entries: it left the file" in deleted.out
    assert b"Fridays" not in toy.read_bytes()
    assert cli("undo", toy).code == 0
    assert toy.read_bytes() == ORIGINAL
