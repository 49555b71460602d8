"""A streamed plan closed before its first action still lets go of what it reads from (a
PostgreSQL plan's spool of encoded users, a temporary file): a generator that never started
runs no `finally` (found in review)."""

from __future__ import annotations

import dataclasses
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memtui.closing import Closing, close_all
from memtui.demo.generate import make_demo_memories
from memtui.engine.ids import TakenIds
from memtui.engine.planner import join_in_order, make_plan
from memtui.engine.profiles import get_profile
from memtui.errors import MemtuiError
from memtui.planfile import write_streamed
from memtui.traits import OWN_IDS

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _joined() -> tuple[Closing[object], object]:
    spool = tempfile.TemporaryFile()  # noqa: SIM115 - the stream owns it
    parts = Closing((iter(()) for _ in range(3)), spool)
    return join_in_order(parts, OWN_IDS, NOW, TakenIds.of(())), spool  # type: ignore[return-value]


def test_a_joined_stream_closed_unread_closes_its_source() -> None:
    joined, spool = _joined()
    joined.close()  # type: ignore[attr-defined]
    assert spool.closed  # type: ignore[attr-defined]


def test_a_plan_that_cannot_be_written_closes_its_unread_stream(tmp_path: Path) -> None:
    plan = make_plan(make_demo_memories(40, 3, NOW), get_profile("longterm"), NOW)
    joined, spool = _joined()
    with pytest.raises(MemtuiError, match="its folder does not exist"):
        write_streamed(
            dataclasses.replace(plan, actions=[]),
            lambda: {},
            joined,  # type: ignore[arg-type]
            str(tmp_path / "no-such-folder" / "plan.json"),
        )
    assert spool.closed  # type: ignore[attr-defined]


def test_closing_closes_every_one_and_raises_the_first_failure() -> None:
    closed: list[str] = []

    class Thing:
        def __init__(self, name: str, fails: bool) -> None:
            self.name, self.fails = name, fails

        def close(self) -> None:
            closed.append(self.name)
            if self.fails:
                raise OSError(self.name)

    with pytest.raises(OSError, match="b"):
        close_all(Thing("a", False), Thing("b", True), object(), Thing("c", True))
    assert closed == ["a", "b", "c"]
