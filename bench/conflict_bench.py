"""How many of the conflicts a plan proposes are contradictions? Each labelled set's user stores
planned with `default` (and `longterm`); a proposed conflict is right when its two facts are a
labelled `contradiction` pair.

    python bench/conflict_bench.py [--labels FOLDER]

Sets: the old calibration set (tests/fixtures/calibration: facts.jsonl, pairs.jsonl) and the
consolidation set's parts (FOLDER/*.jsonl with FOLDER/*.pairs.jsonl beside them; default
../labels/tests/fixtures/consolidation/parts, skipped when absent). Every fact becomes a fresh
entry of importance 0.5 and category `fact` (conflicts are proposed only within one of the
profile's conflict categories; the sets carry none). Precision: contradiction pairs among the
proposed (a conflict with an entry a merge made is right when a fact in it contradicts the
other side); "labelled" counts those the set labels at all (other kinds: other subject, other
person, …); recall: proposed contradictions among all labelled ones.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.engine.planner import make_plan
from memtui.engine.profiles import get_profile
from memtui.model import Memory

NOW = datetime(2026, 12, 1, tzinfo=UTC)
CALIBRATION = ROOT / "tests" / "fixtures" / "calibration"
PARTS = ROOT.parent / "labels" / "tests" / "fixtures" / "consolidation" / "parts"

Facts = list[tuple[str, str, str]]  # id, user, text
Labels = dict[frozenset[str], str]


def _lines(path: Path) -> Iterable[dict[str, str]]:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            yield json.loads(line)


def old_set() -> tuple[Facts, Labels]:
    facts = [(r["id"], r["user"], r["text"]) for r in _lines(CALIBRATION / "facts.jsonl")]
    labels = {frozenset((p["a"], p["b"])): p["kind"] for p in _lines(CALIBRATION / "pairs.jsonl")}
    return facts, labels


def new_set(folder: Path) -> tuple[Facts, Labels]:
    facts: Facts = []
    labels: Labels = {}
    for pairs in sorted(folder.glob("*.pairs.jsonl")):
        part = pairs.with_name(pairs.name.replace(".pairs.jsonl", ".jsonl"))
        if not part.exists():
            continue
        facts += [(r["id"], r["user"], r["text"]) for r in _lines(part)]
        labels.update({frozenset((p["a"], p["b"])): p["kind"] for p in _lines(pairs)})
    return facts, labels


def proposed(facts: Facts, profile: str) -> list[list[frozenset[str]]]:
    """Each conflict the profile proposes, as the pairs of facts across it (an entry made by a
    merge holds several)."""
    when = NOW - timedelta(hours=1)
    users: dict[str, list[Memory]] = {}
    for ident, user, text in facts:
        users.setdefault(user, []).append(
            Memory(
                id=ident,
                content=text,
                category="fact",
                importance=0.5,
                user_id=user,
                created_at=when,
                last_accessed_at=when,
                last_decayed_at=when,
            )
        )
    out = []
    for memories in users.values():
        plan = make_plan(memories, get_profile(profile), NOW)
        facts_of: dict[str, set[str]] = {}  # a merged entry → the facts it holds
        for action in plan.actions:
            if action.kind in ("merge", "absorb"):
                held = set().union(*(facts_of.get(m.id, {m.id}) for m in action.before))
                for m in action.after:
                    facts_of[m.id] = held
        for action in plan.actions:
            if action.kind == "conflict":
                x, y = (facts_of.get(i, {i}) for i in action.targets)
                out.append([frozenset((a, b)) for a in x for b in y])
    return out


def _judged(pairs: list[frozenset[str]], labels: Labels) -> str:
    """A conflict's label: a contradiction if any two facts across it are one; else the
    kind any pair across it has; else unlabelled."""
    kinds = {labels.get(pair, "unlabelled") for pair in pairs}
    if "contradiction" in kinds:
        return "contradiction"
    return min(kinds - {"unlabelled"}, default="unlabelled")


def report(name: str, facts: Facts, labels: Labels) -> None:
    contradictions = sum(kind == "contradiction" for kind in labels.values())
    print(f"{name}: {len(facts)} facts, {contradictions} contradiction pairs")
    for profile in ("default", "longterm"):
        found = proposed(facts, profile)
        kinds = Counter(_judged(pairs, labels) for pairs in found)
        right = kinds["contradiction"]
        precision = right / len(found) if found else float("nan")
        labelled = len(found) - kinds["unlabelled"]
        print(
            f"  {profile:<9} proposed {len(found):>3}  contradictions {right:>3}  "
            f"precision {precision:.2f}  recall {right / max(1, contradictions):.2f}  "
            f"(labelled {labelled}: {dict(kinds)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=Path, default=PARTS, help="the new set's parts")
    args = parser.parse_args()
    report("old calibration set", *old_set())
    if any(args.labels.glob("*.pairs.jsonl")):
        report(f"consolidation set ({args.labels})", *new_set(args.labels))
    else:
        print(f"no consolidation set at {args.labels}")


if __name__ == "__main__":
    main()
