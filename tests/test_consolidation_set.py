"""The consolidation set holds what its README says, and memtui's method reaches its floors on
the set's test split (floors just under what it reaches; the figures are in
bench/consolidation_bench.py's output, quoted in bench/README.md)."""

from __future__ import annotations

from collections import defaultdict

from tests.consolidation_set import SET, by_user, load_facts, load_hard_pairs

FACTS = load_facts()
HARD = load_hard_pairs()


def test_the_set_is_as_large_as_promised_in_both_languages_and_splits() -> None:
    stores = by_user(FACTS)
    assert len(stores) >= 150
    assert len(FACTS) >= 2500
    langs = {(f.lang, f.split) for f in FACTS}
    assert langs == {("en", "dev"), ("en", "test"), ("zh", "dev"), ("zh", "test")}
    assert (SET / "GUIDE.md").is_file() and (SET / "README.md").is_file()


def test_every_store_is_one_split_and_labels_nest() -> None:
    ids = [f.id for f in FACTS]
    assert len(ids) == len(set(ids))
    for user, facts in by_user(FACTS).items():
        assert len({f.split for f in facts}) == 1, user
        entry_of_memory: dict[str, set[str]] = defaultdict(set)
        for f in facts:
            assert f.entry.startswith(f"{user}/") and f.memory.startswith(f"{user}/"), f.id
            entry_of_memory[f.memory].add(f.entry)
        assert all(len(e) == 1 for e in entry_of_memory.values()), user


# MemoryBank's English file is a translation of the Chinese one, person for person, in order
MEMORYBANK = ["emily", "frank", "lucy", "sunny", "jason", "linda", "johnzhang", "ivy", "henry"]
MEMORYBANK += ["gary", "jack", "roland", "susan", "luna", "leo"]


def test_one_person_in_two_languages_is_in_one_split() -> None:
    split = {f.user: f.split for f in FACTS}
    for n, name in enumerate(MEMORYBANK, start=1):
        assert split[f"en-mb-{name}"] == split[f"zh-mb-{n:02d}"], name


def test_hard_pairs_join_two_entries_of_one_user() -> None:
    facts = {f.id: f for f in FACTS}
    kinds = defaultdict(int)
    for p in HARD:
        a, b = facts[p.a], facts[p.b]
        assert a.user == b.user and a.entry != b.entry, p
        kinds[p.kind] += 1
    assert all(kinds[k] >= 50 for k in ("other-subject", "other-episode", "contradiction"))
    assert kinds["other-person"] >= 30
