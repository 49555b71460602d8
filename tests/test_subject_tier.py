"""memtui's two tiers (issue 20): the facts of one subject become one entry that keeps every
fact; entries of two named subjects never merge; a merged text says dates, not "yesterday";
a plan with a subject merge is shown, saved, applied and undone like any other."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.engine.dates import resolved, time_words
from memtui.engine.plan import Action
from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.wording import missing_words
from memtui.model import Memory, Status
from memtui.stores import create_native_store
from tests.conftest import NOW, CliResult

Cli = Callable[..., CliResult]
PLANNED = datetime(2023, 11, 1, tzinfo=UTC)


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(hour=12, tzinfo=UTC)


# (user, text, day written): one store of each language, with one subject's fragments,
# restatements, relatives, two episodes of one kind, and time words
FACTS = [
    ("u1", "I love jazz.", "2023-10-02"),
    ("u1", "I play saxophone in a jazz band.", "2023-10-09"),
    ("u1", "I work as a nurse.", "2023-10-02"),
    ("u1", "I have been working as a nurse for ten years.", "2023-10-09"),
    ("u1", "I enjoy lively music experiences.", "2023-10-12"),
    ("u1", "I love live music experiences.", "2023-10-16"),
    ("u1", "I went to an adoption meeting last Friday.", "2023-07-17"),
    ("u1", "I passed the adoption interviews last Friday.", "2023-10-23"),
    ("u1", "I went swimming at the lake yesterday.", "2023-10-23"),
    ("u1", "Yesterday I swam at the lake with Tom.", "2023-10-23"),
    ("u1", "My sister is a doctor in Boston.", "2023-10-02"),
    ("u1", "My brother is a doctor in Boston.", "2023-10-05"),
    ("u2", "王峰最近在学习世界历史，觉得有些难懂", "2023-04-28"),
    ("u2", "王峰想提高学习世界历史的效率", "2023-04-28"),
    ("u2", "王峰昨天去公园跑步了", "2023-04-29"),
    ("u2", "王峰今天去公园跑步了", "2023-04-28"),
    ("u2", "我妈妈喜欢跳广场舞", "2023-04-29"),
    ("u2", "我喜欢跳广场舞", "2023-04-30"),
]


def _store(facts: Sequence[tuple[str, str, str]] = FACTS) -> list[Memory]:
    return [
        Memory(
            id=f"m{n}", content=text, user_id=user, category="fact", importance=0.5,
            created_at=_day(day),
        )
        for n, (user, text, day) in enumerate(facts)
    ]  # fmt: skip


def _combining(actions: Sequence[Action]) -> list[Action]:
    return [a for a in actions if a.kind in ("merge", "absorb")]


def _kept(action: Action) -> Memory:
    return next(m for m in action.after if m.status is Status.ACTIVE)


def _texts(action: Action) -> set[str]:
    return {m.content for m in action.before}


def test_one_subjects_facts_become_one_entry_of_their_own_kind() -> None:
    plan = make_plan(_store(), get_profile("default"), PLANNED)
    subject = [a for a in plan.actions if a.details.get("tier") == "subject"]
    jazz = next(a for a in subject if "I love jazz." in _texts(a))
    assert _texts(jazz) == {"I love jazz.", "I play saxophone in a jazz band."}
    assert jazz.kind == "merge" and jazz.rule.startswith("memtui: one subject")
    assert "about one subject become one entry, keeping every fact" in jazz.reason
    # the subject is said once
    assert _kept(jazz).content == "I love jazz and play saxophone in a jazz band."
    # each stretch of the text comes from the member its provenance names
    members = {m.id: m.content for m in jazz.before}
    spans = jazz.details["provenance"]["spans"]
    assert {ident for _, _, ident in spans} == set(members)
    for start, end, ident in spans:
        assert _kept(jazz).content[start:end] in members[ident]


def test_different_people_and_episodes_stay_apart() -> None:
    plan = make_plan(_store(), get_profile("default"), PLANNED)
    together = [_texts(a) for a in _combining(plan.actions)]
    apart = [
        ("My sister is a doctor in Boston.", "My brother is a doctor in Boston."),
        ("我妈妈喜欢跳广场舞", "我喜欢跳广场舞"),
        # "last Friday" of July and of October: two meetings
        ("I went to an adoption meeting last Friday.", "I passed the adoption interviews "
         "last Friday."),
    ]  # fmt: skip
    for a, b in apart:
        assert not any({a, b} <= group for group in together), (a, b)


def test_no_member_fact_is_lost_in_any_merge() -> None:
    plan = make_plan(_store(), get_profile("default"), PLANNED)
    combining = _combining(plan.actions)
    assert len(combining) >= 4
    for action in combining:
        text = _kept(action).content
        for member in action.before:
            said = resolved(member.content, member.created_at)
            assert missing_words(said, text) == [], (member.content, text)
    # the stemmer made "lively" into "live": both words are kept now
    live = next(a for a in combining if "I love live music experiences." in _texts(a))
    assert {"lively", "live"} <= set(_kept(live).content.lower().replace(".", "").split())


def test_relative_dates_in_a_merged_text_are_dates() -> None:
    plan = make_plan(_store(), get_profile("default"), PLANNED)
    merges = [a for a in plan.actions if a.kind == "merge"]
    texts = {_kept(a).content for a in merges}
    assert "王峰2023年4月28日去公园跑步了" in texts  # 昨天 on the 29th and 今天 on the 28th
    lake = next(t for t in texts if "lake" in t)
    assert "2023-10-22" in lake and "yesterday" not in lake.lower()
    for action in merges:
        words = time_words(_kept(action).content, None)
        # what is left is a word no date can stand for, from members of one day
        assert all(w.said is None for w in words)
        if words:
            assert len({m.created_at for m in action.before}) == 1


NAMES = ["Caroline", "Melanie", "Anna", "Ben", "Max", "Bella", "Emily", "Frank", "Jason"]
KIN = ["sister", "brother", "mom", "dad", "wife", "husband", "son", "daughter", "friend"]
ZH_NAMES = ["张伟", "李雪", "王峰", "刘琳", "陈阳", "孙悦"]
ZH_KIN = ["妈妈", "爸爸", "姐姐", "哥哥", "老公", "女儿"]
PREDICATES = [
    "is considering adoption and loves abstract painting",
    "enjoys long walks with the dog every evening",
    "works night shifts at the children's hospital",
]
ZH_PREDICATES = ["喜欢跳广场舞，每天晚上都去公园", "下周要参加考试，每天复习到很晚"]


def _merged_together(a: str, b: str) -> bool:
    memories = [
        Memory(id=f"x{n}", content=t, user_id="u", created_at=_day("2023-10-02"))
        for n, t in enumerate([a, b])
    ]
    plan = make_plan(memories, get_profile("default"), PLANNED)
    return any(len(a.before) == 2 for a in _combining(plan.actions))


@settings(max_examples=25, deadline=None)
@given(
    st.sampled_from(["name", "kin", "zh-name", "zh-kin"]),
    st.data(),
)
def test_no_plan_merges_entries_of_two_named_subjects(kind: str, data: st.DataObject) -> None:
    pool = {"name": NAMES, "kin": KIN, "zh-name": ZH_NAMES, "zh-kin": ZH_KIN}[kind]
    x, y = data.draw(st.lists(st.sampled_from(pool), min_size=2, max_size=2, unique=True))
    said = data.draw(st.sampled_from(ZH_PREDICATES if kind.startswith("zh") else PREDICATES))
    if kind == "name":
        a, b = f"{x} {said}.", f"{y} {said}."
    elif kind == "kin":
        a, b = f"My {x} {said}.", f"My {y} {said}."
    elif kind == "zh-name":
        a, b = f"{x}{said}", f"{y}{said}"
    else:
        a, b = f"我{x}{said}", f"我{y}{said}"
    assert not _merged_together(a, b), (a, b)
    assert _merged_together(a, a.rstrip(".") + " too.")  # one subject said twice: merged


# -- shown, saved, applied and undone ---------------------------------------------------------


def _pi_store(path: Path) -> Path:
    records = [
        {
            "type": "fact", "content": text, "paths": [], "potency": 0.9, "source": "auto",
            "tags": [], "sourceSession": "sess-1", "evidenceCount": 1, "id": f"mem_{n:04d}",
            "createdAt": int(_day(day).timestamp() * 1000),
            "lastInjectedAt": int(_day(day).timestamp() * 1000),
            "lastDecayedAt": int(_day(day).timestamp() * 1000), "accessCount": 0,
        }
        for n, (user, text, day) in enumerate(FACTS)
        if user == "u1"
    ]  # fmt: skip
    doc = {"version": 1, "updatedAt": records[-1]["createdAt"], "memories": records}
    path.write_bytes(json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8"))
    return path


def _native_store(path: Path) -> Path:
    memories = [m.with_(importance=0.9) for m in _store()]
    create_native_store(path, memories, now=NOW, kind="import", reason="test")
    return path


def test_the_plan_shows_the_subject_merge_in_text_and_json(tmp_path: Path, cli: Cli) -> None:
    path = _native_store(tmp_path / "store.json")
    text = cli("plan", path, "--profile", "default")
    assert text.code == 0, text.err
    line = next(x for x in text.out.splitlines() if "I love jazz and play saxophone" in x)
    assert " merge " in line and "about one subject become one entry, keeping every fact" in line
    plan = json.loads(cli("plan", path, "--profile", "default", "--json").out)
    subject = [a for a in plan["actions"] if a["details"].get("tier") == "subject"]
    assert subject and all(a["kind"] == "merge" for a in subject)
    assert all(a["rule"].startswith("memtui: one subject") for a in subject)
    assert plan["params"]["subject_threshold"] == get_profile("default").subject_threshold


def _apply_and_undo(path: Path, tmp_path: Path, cli: Cli) -> None:
    plan_file = tmp_path / "plan.json"
    assert cli("plan", path, "--profile", "default", "--out", plan_file).code == 0
    saved = json.loads(plan_file.read_text(encoding="utf-8"))
    subject = [a for a in saved["actions"] if a.get("details", {}).get("tier") == "subject"]
    assert subject, "the saved plan holds a subject merge"
    applied = cli("apply", path, plan_file, "--yes")
    assert applied.code == 0, applied.err
    after = path.read_text(encoding="utf-8")
    assert "I love jazz and play saxophone in a jazz band." in after
    assert cli("undo", path).code == 0


def test_a_saved_subject_merge_applies_and_undoes_on_a_pi_store(tmp_path: Path, cli: Cli) -> None:
    path = _pi_store(tmp_path / "memory-store.json")
    original = path.read_bytes()
    _apply_and_undo(path, tmp_path, cli)
    assert path.read_bytes() == original


def test_a_saved_subject_merge_applies_and_undoes_on_a_native_store(
    tmp_path: Path, cli: Cli
) -> None:
    path = _native_store(tmp_path / "store.json")
    before = orjson.loads(path.read_bytes())["memories"]
    _apply_and_undo(path, tmp_path, cli)
    assert orjson.loads(path.read_bytes())["memories"] == before
