"""The ledger checked against the store on open: a ledger cut short, emptied or deleted while
the store holds a change it recorded is a finding (doctor, every change refused, undo never
picks the wrong transaction); what a commit that did not happen left is reclaimed."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from memtui.service import Service
from memtui.stores import open_store
from tests.conftest import CliResult

Cli = Callable[..., CliResult]
FIRST, SECOND = "mem_mx1tnnaj_c9effc14", "mem_mx1tnnak_699306ba"


def _two_edits(fixture_copy: Callable[[str], Path], cli: Cli) -> tuple[Path, Path]:
    store = fixture_copy("example-store.json")
    assert cli("edit", store, FIRST, "--content", "first change").code == 0
    assert cli("edit", store, SECOND, "--content", "second change").code == 0
    return store, store.with_name(store.name + ".memtui") / "ledger.jsonl"


def _cut_inside_the_last_transaction(ledger: Path) -> None:
    data = ledger.read_bytes()
    start = data.rindex(b'{"tx":{')
    ledger.write_bytes(data[: start + (len(data) - start) // 2])


DAMAGES: dict[str, Callable[[Path], None]] = {
    "cut inside its last transaction": _cut_inside_the_last_transaction,
    "emptied": lambda ledger: ledger.write_bytes(b""),
    "deleted": lambda ledger: ledger.unlink(),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_ledger_that_lost_a_committed_transaction_is_a_finding(
    fixture_copy: Callable[[str], Path], cli: Cli, damage: str
) -> None:
    store, ledger = _two_edits(fixture_copy, cli)
    DAMAGES[damage](ledger)
    damaged = store.read_bytes()

    doctor = cli("doctor", store)
    assert doctor.code == 1
    missing = "transaction 2" if damage.startswith("cut") else "transactions 1–2"
    assert f"does not record {missing}, though" in doctor.out
    assert "`memtui doctor" in doctor.out and "--fix` records the gap" in doctor.out
    assert "no problems found" not in doctor.out
    # the service says it too, for the TUI to show
    assert any(
        f"does not record {missing}" in p for p in Service().stores.problems(open_store(store))
    )

    undo = cli("undo", store)
    assert undo.code == 1 and len(undo.err.strip().splitlines()) == 1, undo.err
    assert f"does not record {missing}" in undo.err
    edit = cli("edit", store, FIRST, "--content", "third change")
    assert edit.code == 1 and "nothing was written" in edit.err
    assert store.read_bytes() == damaged

    fixed = cli("doctor", store, "--fix")
    assert fixed.code == 0, fixed.out
    assert "recorded that transaction" in fixed.out and "no problems found" in fixed.out
    # undo without an id does not reach past the gap; a named transaction is undone
    undo = cli("undo", store)
    assert undo.code == 1 and "lost the transactions up to 2" in undo.err
    assert store.read_bytes() == damaged
    assert cli("edit", store, FIRST, "--content", "third change").out.startswith(
        f"edited {FIRST} in transaction 3"
    )
    assert cli("undo", store).code == 0
    assert open_store(store).get(FIRST).content == "first change"
    assert open_store(store).get(SECOND).content == "second change"


def test_a_writer_that_died_before_its_ledger_line_left_no_finding_only_a_leftover(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store, ledger = _two_edits(fixture_copy, cli)
    backups = ledger.parent / "backups"
    # what a memtui killed between keeping its backup and writing its intent leaves
    leftover = backups / "20261130T115959000000Z-tx3.json"
    shutil.copyfile(store, leftover)

    doctor = cli("doctor", store)
    assert doctor.code == 0 and "no problems found" in doctor.out
    assert f"leftover: {leftover}: a backup no transaction records" in doctor.out
    done = cli("edit", store, FIRST, "--content", "third change")
    assert done.code == 0 and "in transaction 3" in done.out
    assert not leftover.exists()
    assert "leftover" not in cli("doctor", store).out


def test_aborted_intents_are_reported_and_reclaimed(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    store, ledger = _two_edits(fixture_copy, cli)
    before = ledger.read_bytes()
    # an older memtui left the intent of a failed commit and its "aborted" mark
    intent = before.splitlines()[-2]
    aborted = intent.replace(b'"id":2,', b'"id":3,', 1)
    ledger.write_bytes(before + aborted + b"\n" + b'{"tx_id":3,"state":"aborted"}\n')
    doctor = cli("doctor", store)
    assert doctor.code == 0
    assert "leftover:" in doctor.out and "1 aborted transaction (3) still hold" in doctor.out
    fixed = cli("doctor", store, "--fix")
    assert "removed 1 aborted transaction from the ledger" in fixed.out
    assert ledger.read_bytes() == before
    assert "leftover" not in cli("doctor", store).out


async def test_the_tui_says_on_open_that_the_ledger_needs_a_repair(
    fixture_copy: Callable[[str], Path], cli: Cli
) -> None:
    from memtui.tui import make_app

    store, ledger = _two_edits(fixture_copy, cli)
    _cut_inside_the_last_transaction(ledger)
    app = make_app(str(store), watch_interval=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        said = [n.message for n in app._notifications]
    assert any("does not record transaction 2" in m and "memtui doctor" in m for m in said), said
