"""What `memtui plan` prints for a plan of many actions: with `--out`, the first
`LISTED_PER_KIND` actions of each kind (`LISTED_MOST` in all) and a line saying how many more
the file holds; without `--out` (the output is the plan) every action, whether the plan is
made whole or streamed."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.cli.plans import LISTED_MOST, LISTED_PER_KIND
from memtui.demo import make_demo_memories
from memtui.stores.transfer import create_native_store
from tests.conftest import CliResult

NOW = datetime(2026, 12, 1, tzinfo=UTC)
_ACTION_LINE = re.compile(r"^[ ?] *a(\d+) +(\S+)")


def _store(tmp_path: Path, size: int = 900) -> Path:
    memories = make_demo_memories(size, 7, NOW)
    memories = [m.with_(user_id=f"user-{n % 3}") for n, m in enumerate(memories)]
    path = tmp_path / "store.json"
    create_native_store(path, memories, now=NOW, kind="demo", reason="test")
    return path


@pytest.fixture(params=[10**9, 0], ids=["whole", "streamed"])
def plan_of(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    cli: Callable[..., CliResult],
) -> Callable[[int], tuple[Path, tuple[object, ...], CliResult]]:
    """`memtui plan --out` of a generated store of some size, made whole or streamed: the
    plan file, the command's arguments without --out, and what it printed."""
    import memtui.service.plans as plans

    monkeypatch.setattr(plans, "STREAM_FROM", request.param)

    def run(size: int) -> tuple[Path, tuple[object, ...], CliResult]:
        store, out = _store(tmp_path, size), tmp_path / "plan.json"
        args = ("plan", store, "--profile", "longterm", "--now", "2026-12-01T00:00:00Z")
        written = cli(*args, "--out", out)
        assert written.code == 0, written.err
        return out, args, written

    return run


def _action_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if _ACTION_LINE.match(line)]


def test_a_plan_written_to_a_file_lists_the_first_actions_of_each_kind_and_counts_the_rest(
    plan_of: Callable[[int], tuple[Path, tuple[object, ...], CliResult]],
    cli: Callable[..., CliResult],
) -> None:
    out, args, written = plan_of(900)
    kinds = json.loads(out.read_text())["summary"]
    total = sum(kinds.values())
    assert total > LISTED_MOST
    listed = _action_lines(written.out)
    parsed = [_ACTION_LINE.match(line).groups() for line in listed]  # type: ignore[union-attr]
    numbers = [int(n) for n, _ in parsed]
    assert numbers == sorted(numbers) and numbers[:3] == [1, 2, 3]
    listed_kinds = Counter(kind for _, kind in parsed)
    assert listed_kinds == {k: min(n, LISTED_PER_KIND) for k, n in kinds.items()}
    assert len(listed) <= LISTED_MOST
    assert f"… {total - len(listed):,} more actions in {out} (--json lists them all)" in (
        written.out.splitlines()
    )
    assert written.out.rstrip().splitlines()[-1].startswith(f"plan written to {out}")

    printed = cli(*args)
    assert printed.code == 0, printed.err
    everything = _action_lines(printed.out)
    assert len(everything) == total
    assert set(listed) <= set(everything)
    assert "more actions in" not in printed.out


def test_a_plan_of_up_to_200_actions_written_to_a_file_lists_them_all(
    plan_of: Callable[[int], tuple[Path, tuple[object, ...], CliResult]],
    cli: Callable[..., CliResult],
) -> None:
    out, args, written = plan_of(120)
    kinds = json.loads(out.read_text())["summary"]
    assert max(kinds.values()) > LISTED_PER_KIND and sum(kinds.values()) <= LISTED_MOST
    assert _action_lines(written.out) == _action_lines(cli(*args).out)
    assert "more actions in" not in written.out
