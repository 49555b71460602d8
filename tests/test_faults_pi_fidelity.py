"""`memtui add` and `edit` on a pi store write what pi's own add() and update() write: content
trimmed, `"source": "manual"` (pi's hand-add paths; its consolidator never merges "user"
entries), and a `lastDecayedAt` anchor from the start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.conftest import CliResult

Cli = Callable[..., CliResult]
ID = "mem_mx1tnnak_a73461d3"


def _entry(store: Path, ident: str) -> dict[str, object]:
    entries = json.loads(store.read_text())["memories"]
    return next(e for e in entries if e["id"] == ident)


def test_add_on_pi_writes_what_pis_add_writes(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store = fixture_copy("example-store.json")
    result = cli("add", store, "  记得带伞 \n", "--json")
    assert result.code == 0, result.err
    ident = json.loads(result.out)["changes"][0]["id"]
    entry = _entry(store, ident)
    assert entry["content"] == "记得带伞"
    assert entry["source"] == "manual"
    assert entry["lastDecayedAt"] == entry["createdAt"]
    keys = list(entry)
    assert keys[:6] == ["type", "content", "paths", "potency", "source", "tags"]
    assert keys.index("lastDecayedAt") > keys.index("createdAt")


def test_edit_on_pi_trims_content_as_pis_update(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store = fixture_copy("example-store.json")
    assert cli("edit", store, ID, "--content", "  使用 JWT 认证  ").code == 0
    assert _entry(store, ID)["content"] == "使用 JWT 认证"


def test_other_formats_keep_the_text_as_given(tmp_path: Path, cli: Cli) -> None:
    native = tmp_path / "native.json"
    assert (
        cli("import", Path(__file__).parent / "fixtures" / "example-store.json", native).code == 0
    )
    added = cli("add", native, "  spaced  ", "--json")
    assert added.code == 0, added.err
    change = json.loads(added.out)["changes"][0]
    shown = json.loads(cli("show", native, change["id"], "--json").out)
    assert shown["content"] == "  spaced  " and shown["source"] == "user"


def test_a_plan_whose_wording_holds_a_lone_surrogate_is_sealed_and_applies(
    tmp_path: Path, cli: Cli
) -> None:
    """pi cuts merged wording at 500 UTF-16 units, which can split an emoji: the plan file is
    written and sealed anyway, and its seal checks on apply."""
    store = tmp_path / "dedupe-store.json"
    source = Path(__file__).parent / "fixtures" / "pi_conformance" / "consolidate"
    store.write_bytes((source / "dedupe-store.json").read_bytes())
    for version in ("2", "1"):
        plan = tmp_path / f"plan{version}.json"
        made = cli("plan", store, "--out", plan, "--plan-version", version)
        assert made.code == 0 and "Traceback" not in made.err, made.err
        assert '"seals"' in plan.read_text(encoding="utf-8", errors="surrogatepass")
    applied = cli("apply", store, tmp_path / "plan1.json", "--yes")
    assert applied.code == 0, applied.err
    assert "unsealed" not in applied.out + applied.err


def _memtui(*args: str | Path, seed: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "MEMTUI_NOW": "2026-12-02T00:00:00Z"}
    return subprocess.run(
        [sys.executable, "-m", "memtui", *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_a_version_2_plan_of_pis_dedupe_store_applies_in_another_process(tmp_path: Path) -> None:
    """Plan and apply are two runs of memtui, each with its own string hashing: an entry's
    unknown fields (pi's `sourceSession`, `recallHitCount`) are read in the file's order, so
    the entry the plan was made from is the entry apply finds (it was refused as "changed")."""
    store = tmp_path / "dedupe-store.json"
    source = Path(__file__).parent / "fixtures" / "pi_conformance" / "consolidate"
    store.write_bytes((source / "dedupe-store.json").read_bytes())
    plan = tmp_path / "plan.json"
    # seeds under which a set of those two names iterates in opposite orders
    made = _memtui("plan", store, "--out", plan, seed="0")
    assert made.returncode == 0, made.stderr
    applied = _memtui("apply", store, plan, "--yes", seed="2")
    assert applied.returncode == 0, applied.stderr
    assert "changed since" not in applied.stderr
    assert "applied 27 actions" in applied.stdout


FIRST, LAST = "mem_mx1tnnaj_c9effc14", "mem_mx1tnnak_a73461d3"  # tags ["ppt"], ["auth"]


def test_a_hand_merge_takes_its_entries_in_store_order(
    fixture_copy: Callable[[str], Path], cli: Cli, tmp_path: Path
) -> None:
    """Named last first, the merged entry still has the tags (and, on pi, the type) in the
    order the store holds the entries, as pi's own merge and memtui's plans have them; the
    same in every format."""
    pi = fixture_copy("example-store.json")
    native = tmp_path / "native.json"
    assert cli("import", pi, native).code == 0
    for store, category in ((pi, "preference"), (native, None)):
        merged = cli("merge", store, LAST, FIRST, "--json")
        assert merged.code == 0, merged.err
        entry = json.loads(merged.out)["merged"]
        assert entry["tags"] == ["ppt", "auth"]
        assert category is None or entry["category"] == category
