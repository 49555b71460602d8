"""A lone UTF-16 surrogate (pi cuts merged text at 500 units, which can split an emoji) goes
through every file memtui writes: a native store imported from pi, and a plan file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memtui import planfile
from memtui.engine.planner import make_plan
from memtui.engine.profiles import PROFILES
from memtui.service import Service
from memtui.stores import open_store
from memtui.times import from_epoch_ms

SOURCE = Path(__file__).parent / "fixtures" / "pi_conformance" / "consolidate" / "dedupe-store.json"
NOW = from_epoch_ms(1795953600000)


def _lone(texts: list[str]) -> list[str]:
    return [t for t in texts if any(0xD800 <= ord(c) <= 0xDFFF for c in t)]


def test_a_native_store_imported_from_pi_keeps_the_lone_surrogate(tmp_path: Path) -> None:
    value = json.loads((SOURCE.parents[2] / "example-store.json").read_text())
    value["memories"][0]["content"] = "cut in the middle of an emoji @lone@"
    text = json.dumps(value, indent=2).replace("@lone@", "\\ud83d")
    (tmp_path / "memory-store.json").write_text(text)
    pi = open_store(str(tmp_path / "memory-store.json"))
    cut = _lone([m.content for m in pi.memories()])
    assert cut
    svc = Service(clock=lambda: NOW)
    svc.stores.import_store(pi, tmp_path / "native.json")
    (tmp_path / "native.json").read_bytes().decode("utf-8")  # valid UTF-8
    native = svc.stores.open(tmp_path / "native.json")
    assert _lone([m.content for m in native.memories()]) == cut


def test_a_plan_with_a_lone_surrogate_is_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "memory-store.json"
    shutil.copy(SOURCE, path)
    store = open_store(str(path))
    plan = make_plan(
        store.memories(), PROFILES["pi"], NOW, store_format="pi", store=str(path),
        fingerprint=store.fingerprint, ids=store.traits.ids,
    )  # fmt: skip
    for version in (1, 2):
        plan_file = tmp_path / f"plan-{version}.json"
        planfile.write(plan, str(plan_file), version)
        read = planfile.load(str(plan_file), store, None)
        assert [a.id for a in read.actions] == [a.id for a in plan.actions]
