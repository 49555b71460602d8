"""thesearch's merge rule: a title and content score over its line; the entry of highest
effective weight stays."""

from __future__ import annotations

from memtui.engine.clusters import capped_components
from memtui.engine.profiles import Profile
from memtui.engine.rules.run import PlanRun, Step, absorbed, each_group, span
from memtui.engine.rules.weight import effective_weight
from memtui.engine.similarity import jaro_winkler
from memtui.model import Memory


def thesearch_floor(profile: Profile) -> float:
    # 0.4·jw + 0.6·cos > t needs cos > (t − 0.4) / 0.6
    w = profile.thesearch_title_weight
    return (profile.thesearch_merge_score - w) / (1 - w)


def _title(memory: Memory) -> str:
    first = memory.content.strip().splitlines()[0] if memory.content.strip() else ""
    return first[:80]


def _thesearch_merge(run: PlanRun) -> None:
    b, profile, pairs, now, decay = run.b, run.profile, run.pairs, run.now, run.decay
    w = profile.thesearch_title_weight
    strong = []
    for p in pairs:
        a, c = b.current[p.a], b.current[p.b]
        combined = w * jaro_winkler(_title(a), _title(c)) + (1 - w) * p.score
        if combined > profile.thesearch_merge_score:
            strong.append((p.a, p.b, combined))
    for group, members, scores in each_group(b, capped_components(strong, b.order, b.cap), strong):
        winner = max(members, key=lambda m: effective_weight(m, now, decay))
        b.add(
            "merge",
            group,
            absorbed(winner, members, now),
            f"{w:g}·jaro-winkler(title) + {1 - w:g}·cosine > {profile.thesearch_merge_score:g}",
            span(scores),
            f"{len(group)} entries say the same (score {max(scores):.2f}): the one with the "
            f"highest effective weight ({effective_weight(winner, now, decay):.2f}) stays.",
            order=(b.place(group[0]),),
        )


THESEARCH_MERGE = Step("merge", 0.8, _thesearch_merge)
