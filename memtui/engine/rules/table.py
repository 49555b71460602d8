"""Which rules a profile's choices pick, and in what order they run (`steps_for`).

A rule is a module of this package exporting its `Step`s (rules/run.py): a name and start for
progress, and a function of the `PlanRun` that adds the rule's actions through its builder.
A merge rule declares what it brings in a `RuleSteps` row of `MERGE_RULE_STEPS`.
"""

from __future__ import annotations

from memtui.engine.choices import ExpireKind, MergeRule
from memtui.engine.profiles import Profile
from memtui.engine.rules.conflicts import CONFLICTS
from memtui.engine.rules.decay import DECAY
from memtui.engine.rules.deprecate import DEPRECATE
from memtui.engine.rules.expire import EXPIRE
from memtui.engine.rules.guard import GUARD
from memtui.engine.rules.health import HEALTH
from memtui.engine.rules.longterm_merge import LONGTERM_MERGE
from memtui.engine.rules.pair_search import CANDIDATE_ARRAYS, CANDIDATES, CANDIDATES_APART
from memtui.engine.rules.pi_merge import PI_MERGE
from memtui.engine.rules.promote import PROMOTE
from memtui.engine.rules.run import RuleSteps, Step
from memtui.engine.rules.same_memory import MEMTUI_MERGE
from memtui.engine.rules.thesearch_merge import THESEARCH_MERGE, thesearch_floor

_LONGTERM = RuleSteps(LONGTERM_MERGE)
MERGE_RULE_STEPS: dict[MergeRule, RuleSteps] = {
    "pi": RuleSteps(PI_MERGE, candidates=CANDIDATE_ARRAYS, per_user=False),
    "longterm": _LONGTERM,
    "keep-base": _LONGTERM,
    "memtui": RuleSteps(MEMTUI_MERGE, candidates=CANDIDATES_APART),
    "thesearch": RuleSteps(
        THESEARCH_MERGE,
        floor=thesearch_floor,
        conflicts=False,
        finish=(PROMOTE, HEALTH),
    ),
}
EXPIRE_STEPS: dict[ExpireKind, Step] = {
    "expire": EXPIRE,
    "archive": EXPIRE,
    "deprecate": DEPRECATE,
}


def steps_for(profile: Profile) -> tuple[Step, ...]:
    """The steps a profile's choices amount to, in the order they run: decay → candidates →
    absorb and merge → conflicts → expire / archive / deprecate → the rule's last steps →
    the wholesale guard (every profile)."""
    rule = MERGE_RULE_STEPS[profile.merge_rule]
    steps = [DECAY] if profile.decay_model is not None and profile.apply_decay else []
    steps += [rule.candidates or CANDIDATES, rule.merge]
    if rule.conflicts and profile.conflict_low is not None:
        steps.append(CONFLICTS)
    if profile.expire_kind is not None:
        steps.append(EXPIRE_STEPS[profile.expire_kind])
    return (*steps, *rule.finish, GUARD)


def lowest_line(profile: Profile) -> float:
    """The lowest score any of the profile's pair rules looks at."""
    floors = [profile.merge_threshold, profile.absorb_threshold, profile.conflict_low]
    own = MERGE_RULE_STEPS[profile.merge_rule].floor
    if own is not None:
        floors.append(own(profile))
    return min(f for f in floors if f is not None)
