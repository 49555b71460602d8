"""The demo store tells a consistent story (issue 22, item 9)."""

from __future__ import annotations

import pytest

from memtui.demo import make_demo_memories
from memtui.model import Status
from tests.conftest import NOW


@pytest.mark.parametrize("seed", range(12))
def test_the_earlier_merge_is_dated_after_its_members_were_written(seed: int) -> None:
    memories = {m.id: m for m in make_demo_memories(400, seed, NOW)}
    merges = [m for m in memories.values() if m.status is Status.ACTIVE and m.supersedes]
    merged = [m for m in merges if all(memories[i].status is Status.MERGED for i in m.supersedes)]
    assert merged
    for result in merged:
        for ident in result.supersedes:
            member = memories[ident]
            assert member.created_at < result.created_at <= NOW  # type: ignore[operator]
            assert member.superseded_at == result.created_at
            assert member.superseded_by == result.id
