"""Planning at scale gives the very plans the reference implementations give: the array-based
candidate search against brute force, records and field diffs against `to_dict` and the
native encoder, the action-by-action JSON against one `dumps` of the whole plan, and a plan
file read back against the plan made."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui import planfile
from memtui.demo import make_demo_memories
from memtui.engine import candidates
from memtui.engine.candidates import brute_force_pairs, candidate_pairs
from memtui.engine.plan import field_changes, plan_record
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.rules import pair_search
from memtui.jsonout import dumps
from memtui.model import Memory, Source, Status
from memtui.planfile.full import full_json
from memtui.stores import create_native_store, open_store
from memtui.stores.formats.native import NativeFormat

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def _store(size: int, users: int) -> list[Memory]:
    memories = make_demo_memories(size, 11, NOW)
    return [m.with_(user_id=f"user-{i % users}") for i, m in enumerate(memories)]


@pytest.mark.parametrize(("method", "threshold"), [("tf-cosine", 0.75), ("memtui", 0.45)])
def test_the_search_finds_the_brute_force_pairs_on_a_generated_store(
    method: str, threshold: float
) -> None:
    memories = _store(1600, 4)
    assert candidate_pairs(memories, method, threshold) == brute_force_pairs(
        memories, method, threshold
    )


_WORDS = st.sampled_from(["cat", "dog", "the", "a", "sun", "blue", "猫", "run", "7", "sky"])
_TEXTS = st.lists(st.lists(_WORDS, max_size=9).map(" ".join), min_size=2, max_size=40)


@settings(max_examples=60, deadline=None)
@given(
    texts=_TEXTS,
    threshold=st.floats(0.3, 1.0),
    method=st.sampled_from(["tf-cosine", "memtui"]),
    dense=st.booleans(),
)
def test_both_lookups_and_any_chunking_score_as_brute_force(
    texts: list[str], threshold: float, method: str, dense: bool
) -> None:
    memories = [Memory(f"m{i}", t, user_id="u") for i, t in enumerate(texts)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(candidates, "_DENSE_CELLS", 1 << 30 if dense else 0)
        mp.setattr(candidates, "_CHUNK", 7)  # many small chunks
        fast = candidate_pairs(memories, method, threshold)
    assert fast == brute_force_pairs(memories, method, threshold)


@pytest.mark.parametrize("profile", ["longterm", "default"])
def test_a_plan_equals_the_plan_from_brute_force_pairs(
    profile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    memories = _store(2000, 5)
    made = make_plan(memories, get_profile(profile), NOW, store="s")
    assert made.actions
    monkeypatch.setattr(
        pair_search,
        "candidate_pairs",
        lambda ms, method, line, **_: brute_force_pairs(ms, method, line),
    )
    reference = make_plan(memories, get_profile(profile), NOW, store="s")
    assert made.to_dict() == reference.to_dict()
    # the JSON printed action by action is one `dumps` of the whole plan
    assert full_json(made) == dumps(made.to_dict())


_TIMES = st.sampled_from(
    [
        None,
        NOW,
        NOW + timedelta(microseconds=120),
        NOW.astimezone(timezone(timedelta(hours=2))),
    ]
)
_MEMORIES = st.builds(
    Memory,
    id=st.sampled_from(["a", "b"]),
    content=st.sampled_from(["", "x", "long text"]),
    category=st.sampled_from(["fact", ""]),
    importance=st.sampled_from([0.0, 0.5, 1.0]),
    source=st.sampled_from(list(Source)),
    tags=st.sampled_from([(), ("t",), ("t", "u")]),
    paths=st.sampled_from([(), ("p",)]),
    created_at=_TIMES,
    last_accessed_at=_TIMES,
    last_decayed_at=_TIMES,
    updated_at=_TIMES,
    access_count=st.sampled_from([0, 3]),
    evidence_count=st.sampled_from([None, 0, 2]),
    tenured=st.booleans(),
    user_id=st.sampled_from([None, "", "u"]),
    status=st.sampled_from(list(Status)),
    supersedes=st.sampled_from([(), ("s",)]),
    superseded_by=st.sampled_from([None, "", "b"]),
    superseded_at=_TIMES,
    embedding=st.sampled_from([None, (), (0.5, 1.0)]),
    version=st.sampled_from([None, 0, 3]),
    extra=st.sampled_from([{}, {"k": []}]),
)


@settings(max_examples=300, deadline=None)
@given(was=_MEMORIES, now=_MEMORIES)
def test_records_and_field_changes_match_their_references(was: Memory, now: Memory) -> None:
    record = plan_record(was)
    assert record == NativeFormat().encode(was, None)
    assert list(record) == list(NativeFormat().encode(was, None) or {})  # the same key order
    a, b = was.to_dict(), now.to_dict()
    assert field_changes(was, now) == {k: [a[k], b[k]] for k in a if a[k] != b[k]}


def test_with_is_replace() -> None:
    memory = Memory("a", "text", tags=("x",), created_at=NOW)
    changed = memory.with_(importance=0.25, status=Status.ARCHIVED)
    assert changed == dataclasses.replace(memory, importance=0.25, status=Status.ARCHIVED)
    assert memory.importance == 0.8 and changed is not memory
    with pytest.raises(TypeError):
        memory.with_(importance_typo=1.0)


@pytest.mark.parametrize("profile", ["longterm", "default"])
def test_a_plan_file_reads_back_as_the_plan_made(profile: str, tmp_path: Path) -> None:
    path = tmp_path / "store.json"
    create_native_store(path, _store(2000, 5), now=NOW, kind="import", reason="test")
    store = open_store(path)
    made = make_plan(
        store.memories(),
        get_profile(profile),
        NOW,
        store=str(store.path),
        store_format=store.format_name,
        ids=store.traits.ids,
        fingerprint=store.fingerprint,
    )
    out = tmp_path / "plan.json"
    key = bytes(range(32))  # its wording sealed, as the service writes it
    planfile.write(made, str(out), seal_key=key)
    again = planfile.load(str(out), open_store(path), key)
    assert again.to_dict() == made.to_dict()
