"""The merged wording keeps the labelled lines of structured memories ("**Why:**",
"**How to apply:**", as Claude Code's feedback memories have): a clause joins the line of its
own label, and the merged entry's own fields (a file, a title, a category) are those of the
member whose wording it keeps."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.engine.wording import rule_wording
from memtui.model import Memory
from memtui.service import Service

NOW = datetime(2026, 12, 1, tzinfo=UTC)

RECAP = Memory(
    id="feedback_no_recap.md",
    content=(
        "Don't end a reply with a summary of what was just done; the user reads the diff.\n\n"
        '**Why:** the user said so twice ("I can read the diff").\n'
        "**How to apply:** stop after the result, or ask the one question that is open."
    ),
    category="feedback",
    extra={"file": "feedback_no_recap.md", "name": "No recap at the end of replies"},
    created_at=datetime(2026, 10, 1, tzinfo=UTC),
)
SUMMARIES = Memory(
    id="feedback_no_summaries.md",
    content=(
        "Don't end replies with a summary.\n\n"
        "**Why:** the user asked for it in the retro.\n"
        "**How to apply:** stop after the result.\n"
        "**Scope:** every repository."
    ),
    category="guidance",
    extra={"file": "feedback_no_summaries.md", "name": "Skip trailing summaries"},
    created_at=datetime(2026, 11, 1, tzinfo=UTC),
)


def test_a_clause_joins_the_line_of_its_label_and_a_new_label_gets_a_line() -> None:
    wording = rule_wording([SUMMARIES, RECAP], 500)
    assert wording.base == RECAP.id
    assert wording.text.splitlines() == [
        "Don't end a reply with a summary of what was just done; the user reads the diff. "
        "Don't end replies with a summary.",
        "",
        '**Why:** the user said so twice ("I can read the diff"). '
        "the user asked for it in the retro.",
        "**How to apply:** stop after the result, or ask the one question that is open.",
        "**Scope:** every repository.",
    ]
    # every stretch is attributed to the member it came from
    for start, end, ident in wording.spans:
        member = RECAP if ident == RECAP.id else SUMMARIES
        assert wording.text[start:end] in member.content


def test_a_text_without_labels_is_worded_as_before() -> None:
    members = [
        Memory(id="a", content="I have two dogs named Rex and Bo."),
        Memory(id="b", content="I have two dogs.\n**Why:** they were rescued."),
    ]
    wording = rule_wording(members, 500)
    assert wording.text == "I have two dogs named Rex and Bo.\n**Why:** they were rescued."
    plain = rule_wording([members[0], Memory(id="c", content="I walk them at six.")], 500)
    assert plain.text == "I have two dogs named Rex and Bo. I walk them at six."


def test_the_merged_entry_keeps_the_fields_of_the_member_whose_words_it_keeps() -> None:
    fillers = [Memory(id=f"f{c}", content=f"unrelated note about w{c}") for c in "abcdef"]
    for louder in (RECAP, SUMMARIES):  # the other member is the more important one
        members = [m.with_(importance=0.9 if m is not louder else 0.5) for m in (RECAP, SUMMARIES)]
        plan = make_plan([*members, *fillers], get_profile("default"), NOW)
        [merge] = [a for a in plan.actions if a.kind == "merge"]
        merged = merge.after[0]
        base = next(m for m in members if m.id == merge.details["provenance"]["base"])
        assert merged.content.startswith(base.content.split("\n")[0])
        assert (merged.extra, merged.category) == (base.extra, base.category)


def test_a_claude_code_merge_keeps_the_base_file_and_its_lines(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    folder.mkdir()
    for memory in (RECAP, SUMMARIES):
        (folder / memory.id).write_text(
            f"---\nname: {memory.extra['name']}\ndescription: replies\ntype: feedback\n---\n\n"
            f"{memory.content}\n"
        )
    (folder / "MEMORY.md").write_text(
        f"- [No recap]({RECAP.id}) — replies\n- [Skip summaries]({SUMMARIES.id}) — replies\n"
    )
    svc = Service()
    store = svc.stores.open(str(folder))
    ids = [RECAP.id, SUMMARIES.id]
    merged, _ = svc.merges.preview_merge(store, ids, strategy="rule", content=None)
    assert merged.extra["file"] == RECAP.id
    svc.merges.merge(store, ids, strategy="rule", content=None)
    assert sorted(p.name for p in folder.iterdir()) == ["MEMORY.md", RECAP.id]
    kept = (folder / RECAP.id).read_text()
    assert "name: No recap at the end of replies" in kept
    assert "**Why:** the user said so twice" in kept
    assert "the user asked for it in the retro." in kept
    assert "**Scope:** every repository." in kept
    assert (folder / "MEMORY.md").read_text() == f"- [No recap]({RECAP.id}) — replies\n"
