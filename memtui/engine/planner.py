"""`make_plan`: the consolidation pipeline over a snapshot, as reviewable actions.

Order (it matters): decay → absorb duplicates → merge → conflicts → expire / archive /
deprecate → protect → promote. Each step sees the entries as the earlier steps left them, and
each action records the earlier actions on the same entries as its dependencies.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import numpy as np

from memtui.engine.candidates import (
    Pair,
    PairTable,
    candidate_pairs,
    candidate_table,
    memtui_vectors,
    user_groups,
)
from memtui.engine.choices import ExpireKind, MergeRule
from memtui.engine.clashes import CLASH_WORDS, clash, clash_candidates
from memtui.engine.clusters import capped_components, clusters, pair_clusters
from memtui.engine.dates import dates_apart, episodes_differ, has_time_words, resolved
from memtui.engine.decay import DecayModel, decay_for, decay_for_store
from memtui.engine.embedded import (
    Embeddings,
    SubjectScale,
    entry_vectors,
    subject_matrix,
    subject_pairs,
)
from memtui.engine.frames import frames_apart, frames_differ
from memtui.engine.grouping import linkage_groups, similarity_source
from memtui.engine.ids import IdMaker
from memtui.engine.lexical import Vector, numbers_in, vector_cosine
from memtui.engine.merging import absorb_entries, best_member, merge_entries, retire
from memtui.engine.pi_dedupe import pi_answer, pi_dedupe_groups, pi_fold
from memtui.engine.plan import FOLLOWS, Action, Plan
from memtui.engine.plan_compact import decay_reason
from memtui.engine.profiles import Profile
from memtui.engine.similarity import jaro_winkler
from memtui.engine.subject_tier import lexical_source, subject_groups
from memtui.engine.subjects import subjects_apart, subjects_differ
from memtui.engine.wholesale import held, hold_wholesale
from memtui.engine.wording import missing_words, rule_wording, subject_wording
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.model import SOURCE_PRIORITY, Memory, Source, Status
from memtui.times import days_between, to_base36, to_epoch_ms
from memtui.traits import OWN_IDS, IdStyle

Progress = Callable[[str, float], None]
_Found = TypeVar("_Found", list[Pair], PairTable)
MergedText = Callable[[Sequence[Memory]], str | None]


class Cancelled(MemtuiError):
    """Planning was cancelled by the person waiting for it."""


class _Builder:
    def __init__(self, memories: Sequence[Memory], ids: IdStyle, now: datetime, cap: int) -> None:
        self.cap = cap
        self.eligible: list[Memory] = []
        self.current: dict[str, Memory] = {m.id: m for m in memories}
        self.order = [m.id for m in memories]
        self.position = {ident: n for n, ident in enumerate(self.order)}
        self.actions: list[Action] = []
        self.last_touch: dict[str, str] = {}
        self.locked: set[str] = set()
        self.ids = IdMaker(ids, self.current, now)
        self.embeddings: Embeddings | None = None
        self.numbers: dict[str, frozenset[str]] | None = None  # what each eligible entry states
        self.vectors: list[Vector] | None = None  # the eligible entries' memtui vectors
        self.clashing: list[tuple[str, str]] = []  # pairs that clash: never in one group

    def add(
        self,
        kind: str,
        before_ids: Sequence[str],
        after: Sequence[Memory],
        rule: str,
        scores: dict[str, float],
        reason: str,
        *,
        needs_decision: bool = False,
        details: dict[str, Any] | None = None,
    ) -> Action:
        if kind in ("merge", "absorb") and len(before_ids) > self.cap:
            raise MemtuiError(
                f"a {kind} of {len(before_ids)} entries is over the profile's cap of {self.cap}"
            )
        if len(before_ids) == 1 and len(after) == 1 and after[0].id == before_ids[0]:
            targets = [before_ids[0]]  # one entry changed in place (decay, expiry): most actions
            last = self.last_touch.get(targets[0])
            deps = [] if last is None else [last]
        else:
            targets = list(dict.fromkeys([*before_ids, *(m.id for m in after)]))
            deps = list(dict.fromkeys(self.last_touch[t] for t in targets if t in self.last_touch))
            deps.sort(key=lambda a: int(a[1:]))
        action = Action(
            id=f"a{len(self.actions) + 1}",
            kind=kind,
            targets=targets,
            before=[self.current[i] for i in before_ids],
            after=list(after),
            rule=rule,
            scores={k: round(v, 6) for k, v in scores.items()},
            reason=reason,
            depends_on=deps,
            needs_decision=needs_decision,
            details=details or {},
        )
        self.actions.append(action)
        for ident in targets:
            self.last_touch[ident] = action.id
        if needs_decision:
            self.locked.update(targets)  # a proposal: later steps leave these entries alone
        else:
            for memory in after:
                if memory.id not in self.current:
                    self.position[memory.id] = len(self.order)
                    self.order.append(memory.id)
                self.current[memory.id] = memory
        return action

    def active(self) -> list[Memory]:
        return [self.current[i] for i in self.order if self.current[i].status is Status.ACTIVE]


@dataclass(slots=True)
class PlanRun:
    """What the steps of one plan share: the entries as the earlier steps left them, the
    candidate pairs once found, and the options of the call."""

    b: _Builder
    profile: Profile
    now: datetime
    snapshot: Sequence[Memory]
    decay: DecayModel | None
    """The profile's decay model, also for the steps that only weigh with it (thesearch)."""
    session: str
    merged_text: MergedText | None
    last_run: datetime | None
    report: Progress
    found: PairTable | None = None
    """The candidate pairs as arrays, where the rule needs no `Pair`s (pi)."""
    _pairs: list[Pair] | None = None
    health: dict[str, object] | None = None
    warnings: list[str] = dataclasses.field(default_factory=list)
    apart: list[Pair] = dataclasses.field(default_factory=list)
    """Candidate pairs kept out of merges because they clash (engine/clashes.py)."""

    @property
    def pairs(self) -> list[Pair]:
        """The candidate pairs, highest score first (built from `found` on first use)."""
        if self._pairs is None:
            self._pairs = self.found.pairs() if self.found is not None else []
        return self._pairs

    @pairs.setter
    def pairs(self, pairs: list[Pair]) -> None:
        self._pairs = pairs


@dataclass(frozen=True, slots=True)
class Step:
    """One step of a profile's pipeline: its name and start as progress, and what it does."""

    name: str
    start: float
    run: Callable[[PlanRun], None]


def make_plan(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    **options: Any,
) -> Plan:
    """The plan for `memories` under `profile` as of `now` (see `_make_plan` for options)."""
    with gc_paused():
        return _make_plan(memories, profile, now, **options)


def _make_plan(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    *,
    store: str = "",
    store_format: str = "native",
    ids: IdStyle = OWN_IDS,
    fingerprint: str = "",
    progress: Progress | None = None,
    cancelled: Callable[[], bool] | None = None,
    last_run: datetime | None = None,
    embeddings: Embeddings | None = None,
    session: str | None = None,
    merged_text: MergedText | None = None,
) -> Plan:
    """`embeddings`: sentence embeddings to combine with the `memtui` method's lexical score
    (engine/embedded.py); other methods ignore them. The plan's params say what was used.
    `session` names the consolidation in the entries the pi rule creates (pi's
    `sourceSession`; default `memtui-plan-<now, epoch ms in base 36>`). `merged_text` stands
    in for pi's model when given: the merged wording of a cluster, or None for a veto.
    `ids`: how the store makes ids (its traits' `ids`) for the entries merges create."""

    def report(name: str, fraction: float) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("planning cancelled")
        if progress is not None:
            progress(name, fraction)

    b = _Builder(memories, ids, now, profile.cluster_max)
    if profile.method == "memtui":
        b.embeddings = embeddings
    run = PlanRun(
        b,
        profile,
        now,
        memories,
        decay_for_store(profile, memories),
        session or f"memtui-plan-{to_base36(to_epoch_ms(now))}",
        merged_text,
        last_run,
        report,
    )
    for step in profile.steps:
        report(step.name, step.start)
        step.run(run)
    report("done", 1.0)
    params = profile.to_dict()
    if run.decay is not None and run.decay != decay_for(profile):  # the store's own (decay.py)
        params["decay_model"] = run.decay.name
        params["decay_slower"] = dict(run.decay.slower)
    params["similarity"] = _similarity_used(profile, b.embeddings)
    plan = Plan(store, store_format, fingerprint, profile.name, now, params, b.actions)
    if run.health is not None:
        plan.health = run.health
    plan.warnings = run.warnings
    return plan


def _similarity_used(profile: Profile, embeddings: Embeddings | None) -> dict[str, Any]:
    if embeddings is None:
        return {"method": profile.method}
    return {"method": "memtui+embed", "model": embeddings.model}


# -- steps ------------------------------------------------------------------------------------


def _decay(run: PlanRun) -> None:
    b, profile, now, decay = run.b, run.profile, run.now, run.decay
    if decay is None:
        return
    for memory in b.active():
        if decay.exempt(memory):
            continue
        days = decay.elapsed(memory, now)
        new = decay.value_after(memory, days)
        change = memory.importance - new
        moves_anchor = decay.name == "pi" and memory.last_decayed_at != now
        if (change <= 0 or change < profile.decay_min_change) and not moves_anchor:
            continue
        after = memory.with_(importance=new, last_decayed_at=now)
        rule = f"decay:{decay.name} ×{decay.rate:g}/day"
        reason = decay_reason(days, memory.importance, new, decay.rate, profile.archive_line)
        if decay.slower:  # memtui's own, in a store where no use was ever recorded
            rule, reason = _unused_decay(decay, memory, days, new)
        b.add(
            "decay",
            [memory.id],
            [after],
            rule,
            {"days": days, "from": memory.importance, "to": new},
            reason,
        )


def _unused_decay(decay: DecayModel, memory: Memory, days: float, new: float) -> tuple[str, str]:
    """The rule and reason of a decay by half-life in a store where no use was recorded."""
    slower = ", ".join(f"{c} ×{f:g}" for c, f in decay.slower)
    return (
        f"decay:halflife 30 + 335 × importance days ({slower}), no use recorded",
        f"No use was ever recorded in this store: {days:.0f} days since it was made, "
        f"importance {memory.importance:.2f} → {new:.2f} (half-life "
        f"{decay.half_life(memory):.0f} days).",
    )


def _eligible(b: _Builder, profile: Profile) -> list[Memory]:
    return [
        m
        for m in b.active()
        if (m.tenured or m.importance >= profile.min_importance)
        and not (profile.exclude_user_source and m.source is Source.USER)
    ]


def _lowest_line(profile: Profile) -> float:
    """The lowest score any of the profile's pair rules looks at."""
    floors = [profile.merge_threshold, profile.absorb_threshold, profile.conflict_low]
    own = MERGE_RULE_STEPS[profile.merge_rule].floor
    if own is not None:
        floors.append(own(profile))
    return min(f for f in floors if f is not None)


def _thesearch_floor(profile: Profile) -> float:
    # 0.4·jw + 0.6·cos > t needs cos > (t − 0.4) / 0.6
    w = profile.thesearch_title_weight
    return (profile.thesearch_merge_score - w) / (1 - w)


def _candidates(run: PlanRun) -> None:
    subject = run.profile.subject_threshold
    line = _lowest_line(run.profile)
    if subject is None or not _subject_tier(run.profile) or subject >= line:
        run.pairs = _search(run, candidate_pairs, line)
        return
    # one search down to the subject line; the other rules see the pairs at their own lines
    found = run.found = _search(run, candidate_table, subject)
    keep = found.score >= line
    run.pairs = PairTable(found.memories, found.a[keep], found.b[keep], found.score[keep]).pairs()


def _candidates_apart(run: PlanRun) -> None:
    """The candidate pairs, less those at the merge line that clash ("likes tea" / "doesn't
    like tea" score as one memory): no merge joins them, the conflict step sees them."""
    _candidates(run)
    line = run.profile.merge_threshold
    if line is None:
        return
    current = run.b.current
    kept = []
    for p in run.pairs:
        if p.score >= line and clash(current[p.a].content, current[p.b].content):
            run.apart.append(p)
            run.b.clashing.append((p.a, p.b))
        else:
            kept.append(p)
    run.pairs = kept


def _candidate_arrays(run: PlanRun) -> None:
    run.found = _search(run, candidate_table, _lowest_line(run.profile))


def _search(run: PlanRun, search: Callable[..., _Found], line: float) -> _Found:
    b, profile = run.b, run.profile
    b.eligible = _eligible(b, profile)
    if profile.method == "memtui":
        b.vectors = memtui_vectors(b.eligible)
    return search(
        b.eligible,
        profile.method,
        line,
        progress=lambda done, total: run.report("candidates", 0.1 + 0.7 * done / max(1, total)),
        embeddings=b.embeddings,
        vectors=b.vectors,
    )


def _group_scores(
    groups: Sequence[Sequence[str]], scored: Iterable[tuple[str, str, float]]
) -> list[list[float]]:
    """The scores of the pairs inside each group (one pass over the pairs)."""
    where = {ident: n for n, group in enumerate(groups) for ident in group}
    out: list[list[float]] = [[] for _ in groups]
    for x, y, score in scored:
        gx = where.get(x)
        if gx is not None and gx == where.get(y):
            out[gx].append(score)
    return out


Scored = list[tuple[str, str, float]]


def _each_group(
    b: _Builder, groups: list[list[str]], scored: Scored
) -> Iterator[tuple[list[str], list[Memory], list[float]]]:
    """Each group with its members as the earlier actions left them and its pairs' scores."""
    for group, scores in zip(groups, _group_scores(groups, scored), strict=True):
        yield group, [b.current[i] for i in group], scores


def _absorbed(
    survivor: Memory,
    members: Sequence[Memory],
    now: datetime,
    *,
    boost: float = 0.0,
    max_paths: int = 10**6,
    max_tags: int = 10**6,
) -> list[Memory]:
    """The survivor having taken in the other members, then the others, retired into it."""
    others = [m for m in members if m is not survivor]
    kept, retired = absorb_entries(
        survivor, others, now=now, boost=boost, max_paths=max_paths, max_tags=max_tags
    )
    return [kept, *retired]


def _live(b: _Builder, ident: str) -> bool:
    return b.current[ident].status is Status.ACTIVE and ident not in b.locked


def _span(scores: list[float]) -> dict[str, float]:
    return {"min_score": min(scores), "max_score": max(scores)}


def _pi_absorb_and_merge(run: PlanRun) -> None:
    b, profile, found, now = run.b, run.profile, run.found, run.now
    merged_text = run.merged_text
    assert profile.merge_threshold is not None and found is not None
    position = np.fromiter(
        (b.position[m.id] for m in found.memories), dtype=np.int64, count=len(found.memories)
    )
    groups, spans = pair_clusters(
        b.order,
        position[found.a],
        position[found.b],
        found.score,
        profile.merge_threshold,
        profile.cluster_min,
        profile.cluster_max,
    )
    if profile.absorb_threshold is not None:
        # an opt-in memtui rule (pi absorbs only as a new memory arrives, in its extractor)
        _pi_absorb(b, profile, run.pairs, groups, now)
    merged_any: list[str] = []
    for group, (low, high) in zip(groups, spans, strict=True):
        scores = [low, high]  # the lowest and highest score inside the group
        members = [b.current[i] for i in group]
        if merged_text is not None:
            answer = pi_answer(merged_text(members))
            if answer is None:
                continue  # the model's veto (or an answer pi ignores): pi leaves them be
        else:
            # without a model: the best member's wording, cut where pi cuts a model's answer
            answer = pi_answer(best_member(members).content)
        merged, retired = merge_entries(
            members,
            new_id=b.ids.new("|".join(group)),
            now=now,
            rule="pi",
            content=answer,
            max_paths=profile.max_paths,
            max_tags=profile.max_tags,
        )
        # pi's merged entry: no evidence count, the consolidation's session, nothing else
        merged = merged.with_(evidence_count=None, extra={"sourceSession": run.session})
        action = b.add(
            "merge",
            group,
            [merged, *retired],
            f"pi: union-find over similarity ≥ {profile.merge_threshold:g}, "
            f"clusters of {profile.cluster_min}–{profile.cluster_max}",
            {**_span(scores), "size": len(group)},
            f"{len(group)} entries about one thing (pi similarity up to {max(scores):.2f}) "
            f"become one, worded as "
            f"{_whose(members) if merged_text is None else 'the model says'}.",
        )
        merged_any.append(action.id)
    if merged_any:
        _pi_dedupe(b, now, merged_any)


DEDUPE_RULE = "pi: dedupe of identical normalised content after a merge"


def redo_pi_dedupe(plan: Plan, memories: Sequence[Memory]) -> Plan:
    """`plan` with pi's dedupe planned again for the merges that are now approved by default
    (a model vetoed some, or could not be asked): none when no merge is left, as pi folds
    nothing then. Action ids of the other actions stay."""
    others = [a for a in plan.actions if a.rule != DEDUPE_RULE]
    plan = Plan(
        plan.store,
        plan.store_format,
        plan.store_fingerprint,
        plan.profile,
        plan.now,
        plan.params,
        others,
        dict(plan.health),
        warnings=list(plan.warnings),
    )
    # what the wholesale guard holds is replayed as approved: a person may approve it still
    plan.decisions = {a.id: True for a in others if held(a)}
    approved = set(plan.default_approved())
    plan.decisions = {}
    merges = [a.id for a in others if a.kind == "merge" and a.id in approved]
    if not merges:
        return plan
    # pi's dedupe creates no entry: any id style will do
    b = _Builder(memories, OWN_IDS, plan.now, int(plan.params.get("cluster_max", 8)))
    for action in others:
        if action.id in approved:
            for memory in action.after:
                if memory.id not in b.current:
                    b.order.append(memory.id)
                    b.position[memory.id] = len(b.order) - 1
                b.current[memory.id] = memory
                b.last_touch[memory.id] = action.id
    b.actions = list(others)
    next_id = max((int(a.id[1:]) for a in others), default=0)
    before = len(b.actions)
    _pi_dedupe(b, plan.now, merges)
    # after every id the plan already uses
    added = [
        dataclasses.replace(a, id=f"a{next_id + n}")
        for n, a in enumerate(b.actions[before:], start=1)
    ]
    return dataclasses.replace(plan, actions=[*others, *added])


def _pi_dedupe(b: _Builder, now: datetime, merges: list[str]) -> None:
    """pi's dedupe after a consolidation that merged something: entries whose normalised
    content is identical fold into the most potent one, across the whole store."""
    step = max(1, b.cap - 1)
    for survivor_id, folded_ids in pi_dedupe_groups(b.active()):
        # pi folds one twin after the other: over the cap, the same folds in several actions
        for start in range(0, len(folded_ids), step):
            chunk = folded_ids[start : start + step]
            survivor = b.current[survivor_id]
            folded = [b.current[i] for i in chunk]
            kept = pi_fold(survivor, folded)
            retired = retire(folded, survivor_id, now)
            # pi folds only when some merge is applied: each fold follows the plan's merges
            b.add(
                "absorb",
                [survivor_id, *chunk],
                [kept, *retired],
                DEDUPE_RULE,
                {"size": 1 + len(folded_ids)},
                f"{1 + len(folded_ids)} entries say exactly the same (ignoring case, spaces "
                "and punctuation): pi folds them into the most potent one after it merges.",
                details={FOLLOWS: merges},
            )


def _pi_absorb(
    b: _Builder,
    profile: Profile,
    pairs: list[Pair],
    groups: list[list[str]],
    now: datetime,
) -> None:
    assert profile.absorb_threshold is not None
    in_cluster = {i for g in groups for i in g}
    # pi absorbs a near-identical pair as it arrives; here: the ones its clusters leave out
    high = [
        (p.a, p.b, p.score)
        for p in pairs
        if p.score >= profile.absorb_threshold and p.a not in in_cluster and p.b not in in_cluster
    ]
    high_groups = capped_components(high, b.order, b.cap)
    for group, members, scores in _each_group(b, high_groups, high):
        survivor = min(members, key=lambda m: (m.created_at or now, b.position[m.id]))
        b.add(
            "absorb",
            group,
            _absorbed(
                survivor,
                members,
                now,
                boost=profile.absorb_boost,
                max_paths=profile.max_paths,
                max_tags=profile.max_tags,
            ),
            f"pi: similarity ≥ {profile.absorb_threshold:g}",
            _span(scores),
            f"{len(group)} near-identical entries (pi similarity {max(scores):.2f}): the older "
            f"keeps its wording and gains tags, paths and importance +{profile.absorb_boost:g}.",
        )


def _clusters(b: _Builder, scored: Scored, min_size: int) -> list[list[str]]:
    """Connected groups of `min_size` up to the cap; larger ones are left out (pi, longterm)."""
    return clusters([(x, y) for x, y, _ in scored], b.order, min_size, b.cap)


def _most_important(b: _Builder, members: Sequence[Memory]) -> Memory:
    return max(members, key=lambda m: (m.importance, -b.position[m.id]))


def _whose(members: Sequence[Memory]) -> str:
    best = max(members, key=lambda m: (SOURCE_PRIORITY[m.source], m.importance))
    if best.source is Source.USER:
        return "the user wrote it"
    return "the strongest entry"


def _longterm_absorb_and_merge(run: PlanRun) -> None:
    b, profile, pairs, now = run.b, run.profile, run.pairs, run.now
    assert profile.absorb_threshold is not None and profile.merge_threshold is not None
    high = [(p.a, p.b, p.score) for p in pairs if p.score >= profile.absorb_threshold]
    for group, members, scores in _each_group(b, capped_components(high, b.order, b.cap), high):
        b.add(
            "absorb",
            group,
            _absorbed(_most_important(b, members), members, now),
            f"{profile.method} ≥ {profile.absorb_threshold:g}",
            _span(scores),
            f"{len(group)} duplicates ({_scored_by(profile.method, members)} "
            f"{max(scores):.2f}): the most important keeps its wording and takes in the others' "
            "tags, accesses and evidence.",
        )
    upper = profile.merge_below if profile.merge_below is not None else math.inf
    middle = [
        (p.a, p.b, p.score)
        for p in pairs
        if profile.merge_threshold <= p.score < upper and _live(b, p.a) and _live(b, p.b)
    ]
    for group, members, scores in _each_group(b, _clusters(b, middle, profile.cluster_min), middle):
        merged, retired = merge_entries(
            members,
            new_id=b.ids.new("|".join(group)),
            now=now,
            rule="longterm",
            max_paths=10**6,
            max_tags=10**6,
        )
        b.add(
            "merge",
            group,
            [merged, *retired],
            f"{profile.method} in [{profile.merge_threshold:g}, {upper:g}): rule merge",
            {**_span(scores), "size": len(group)},
            f"{len(group)} related entries ({_scored_by(profile.method, members)} up to "
            f"{max(scores):.2f}) become one: the more important wording first, the others "
            "joined with '；'.",
        )


def _scored_by(method: str, members: Sequence[Memory]) -> str:
    """What the scores of these members are: `tf-cosine` is the cosine of the entries' own
    embeddings when they all carry embeddings of one length (the Go system's rule)."""
    sizes = {len(m.embedding) if m.embedding else 0 for m in members}
    if method == "tf-cosine" and len(sizes) == 1 and 0 not in sizes:
        return "embedding cosine"
    return method


def _memtui_absorb_and_merge(run: PlanRun) -> None:
    """memtui's own, tier *same*: linkage groups over the pairs at or above the merge line; a
    group whose weakest pair reaches the absorb line is a set of duplicates (the most important
    keeps its wording), any other group is merged with rule wording. Then tier *subject*
    (`_memtui_subject_merge`) where the profile has a subject line. Entries that state
    different numbers, speak of different subjects or of different days never join."""
    b, profile, pairs, now = run.b, run.profile, run.pairs, run.now
    assert profile.merge_threshold is not None
    line = profile.merge_threshold
    stated = _numbers_stated(b)
    scored = [
        (p.a, p.b, p.score)
        for p in pairs
        if p.score >= line and not _apart(b, stated, p.a, p.b, frames=False)
    ]
    groups = linkage_groups(
        scored,
        b.order,
        _never_together(b, _similarity_matrix(b, profile.method), stated, frames=False),
        line,
        linkage=profile.linkage,
        min_size=profile.cluster_min,
        max_size=profile.cluster_max,
    )
    absorb_line = profile.absorb_threshold if profile.absorb_threshold is not None else math.inf
    units: list[tuple[list[str], str]] = []  # each group and the entry it became
    for group in groups:
        members = [b.current[i] for i in group.members]
        scores = {
            "min_score": group.weakest,
            "max_score": group.strongest,
            "size": len(members),
        }
        split = ""
        if group.split_from:
            scores["split_from"] = group.split_from
            split = (
                f" Split from a group of {group.split_from} (over the cap of "
                f"{profile.cluster_max}): raise the merge line to make it tighter."
            )
        kept = _most_important(b, members)
        if group.weakest >= absorb_line and _keeps_everything(kept, members):
            b.add(
                "absorb",
                group.members,
                _absorbed(
                    kept,
                    members,
                    now,
                    max_paths=profile.max_paths,
                    max_tags=profile.max_tags,
                ),
                f"memtui: every pair ≥ {absorb_line:g}",
                scores,
                f"{len(members)} duplicates (memtui similarity ≥ {group.weakest:.2f} for every "
                "pair): the most important keeps its wording and takes in the others' tags, "
                f"accesses and evidence.{split}",
            )
            units.append((group.members, kept.id))
            continue
        wording = rule_wording(_dated(members), profile.wording_max_chars)
        merged, retired = merge_entries(
            members,
            new_id=b.ids.new("|".join(group.members)),
            now=now,
            rule="memtui",
            content=wording.text,
            max_paths=profile.max_paths,
            max_tags=profile.max_tags,
        )
        said = "worded as the most complete entry"
        if wording.added:
            n = len(wording.added)
            said += f" plus {_clauses(n)} that add{'s' if n == 1 else ''} something"
        elif not wording.left_out:
            said += " (the others add no new words)"
        if wording.left_out:
            said += (
                f"; {_clauses(len(wording.left_out))} with new words did not fit in "
                f"{profile.wording_max_chars} characters and stay out (see the details)"
            )
        b.add(
            "merge",
            group.members,
            [merged, *retired],
            f"memtui: {profile.linkage} linkage at ≥ {line:g}, groups of "
            f"{profile.cluster_min}–{profile.cluster_max}",
            scores,
            f"{len(members)} entries about one thing (memtui similarity {group.weakest:.2f} for "
            f"the weakest pair, up to {group.strongest:.2f}) become one, {said}.{split}",
            details={"provenance": wording.provenance()},
        )
        units.append((group.members, merged.id))
    if _subject_tier(profile) and run.found is not None:
        _memtui_subject_merge(run, units, stated)


def _subject_tier(profile: Profile) -> bool:
    """The subject tier runs with the memtui rule on memtui's own scores, where its line was
    measured."""
    return (
        profile.subject_threshold is not None
        and profile.merge_rule == "memtui"
        and profile.method == "memtui"
    )


SUBJECT_RULE = "memtui: one subject"


def _memtui_subject_merge(
    run: PlanRun, units: list[tuple[list[str], str]], stated: Mapping[str, frozenset[str]]
) -> None:
    """Tier *subject*: complementary facts about one subject become one entry that keeps every
    fact. Average linkage at the subject line continues from the first tier's groups (each
    an entry now) and the entries it left alone (engine/subject_tier.py)."""
    b, profile, found, now = run.b, run.profile, run.found, run.now
    assert profile.subject_threshold is not None and found is not None
    line = profile.subject_threshold
    searched = list(found.memories)
    unit_of = np.full(len(searched), -1, dtype=np.int64)
    position = {m.id: n for n, m in enumerate(searched)}
    results: list[str] = []
    for members, result in units:
        if _live(b, result):
            unit_of[[position[i] for i in members]] = len(results)
            results.append(result)
    for n, m in enumerate(searched):
        if unit_of[n] < 0 and _live(b, m.id) and b.current[m.id] is m:
            unit_of[n] = len(results)
            results.append(m.id)
    counts = np.bincount(unit_of[unit_of >= 0], minlength=len(results)).tolist()
    sizes = dict(zip(results, counts, strict=True))
    a, c, score = found.a, found.b, found.score
    source = lexical_source(b.eligible, b.vectors or []) if b.embeddings is None else None
    if b.embeddings is not None and profile.subject_cosine is not None:
        a, c, score, source = _subject_meaning(b, profile, searched, (a, c, score))
    if source is None:
        source = _similarity_matrix(b, profile.method)
    scores_of = _never_together(b, source, stated, frames=True)
    groups = subject_groups(
        unit_of,
        a,
        c,
        score,
        lambda rows: scores_of([searched[r].id for r in rows]),
        line,
        profile.cluster_max,
    )
    for group in groups:
        entries = [b.current[results[u]] for u in group.units]
        entries.sort(key=lambda m: b.position[m.id])
        wording = subject_wording(_dated(entries), profile.wording_max_chars)
        while wording is None and len(entries) > 2:
            entries = entries[:-1]  # everything must fit: the latest member waits
            wording = subject_wording(_dated(entries), profile.wording_max_chars)
        if wording is None:
            continue
        ids = [m.id for m in entries]
        merged, retired = merge_entries(
            entries,
            new_id=b.ids.new("|".join(ids)),
            now=now,
            rule="memtui",
            content=wording.text,
            max_paths=profile.max_paths,
            max_tags=profile.max_tags,
        )
        facts = sum(sizes[m.id] for m in entries)
        b.add(
            "merge",
            ids,
            [merged, *retired],
            f"{SUBJECT_RULE}: average linkage at ≥ {line:g}, up to {profile.cluster_max} "
            "entries, every fact kept",
            {
                "min_score": group.weakest,
                "mean_score": group.mean,
                "max_score": group.strongest,
                "size": len(entries),
            },
            f"{len(entries)} entries about one subject become one entry, keeping every fact "
            f"(memtui similarity {group.mean:.2f} on average, the weakest pair "
            f"{group.weakest:.2f}; {facts} facts in all).",
            details={"tier": "subject", "provenance": wording.provenance()},
        )


def _subject_meaning(
    b: _Builder,
    profile: Profile,
    searched: Sequence[Memory],
    pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Callable[[list[str]], np.ndarray]]:
    """The subject tier with sentence embeddings: its own reading of a cosine (the fragments of
    one subject sit lower than restatements), the pairs it adds and its scores."""
    assert b.embeddings is not None and profile.subject_threshold is not None
    assert profile.subject_cosine is not None
    scale = SubjectScale(
        profile.subject_threshold,
        profile.subject_cosine,
        profile.subject_cosine_cjk
        if profile.subject_cosine_cjk is not None
        else profile.subject_cosine,
    )
    embedded = entry_vectors(searched, b.embeddings)
    found = [
        (group[x], group[y], s)
        for group in user_groups(searched)
        for x, y, s in subject_pairs([embedded[i] for i in group], scale)
    ]
    extra = np.array([t[:2] for t in found], dtype=np.int64).reshape(-1, 2)
    a = np.concatenate([pairs[0], extra[:, 0]])
    c = np.concatenate([pairs[1], extra[:, 1]])
    score = np.concatenate([pairs[2], np.array([t[2] for t in found], dtype=np.float64)])
    lexical = lexical_source(b.eligible, b.vectors or [])
    where = {m.id: n for n, m in enumerate(searched)}

    def scores(ids: list[str]) -> np.ndarray:
        return subject_matrix(lexical(ids), [embedded[where[i]] for i in ids], scale)

    return a, c, score, scores


def _dated(members: Sequence[Memory]) -> list[Memory]:
    """The members with their relative time words said as dates (engine/dates.py)."""
    return [
        m if (text := resolved(m.content, m.created_at)) == m.content else m.with_(content=text)
        for m in members
    ]


def _keeps_everything(kept: Memory, members: Sequence[Memory]) -> bool:
    """Whether an absorb into `kept` loses nothing: its wording says every word of the others
    (surface words: "lively" is not "live"), and no time word would point elsewhere once it
    takes the earliest creation time. Otherwise the group is merged (every clause with a new
    word kept, the dates said)."""
    days = {m.created_at.date() if m.created_at else None for m in members}
    if len(days) > 1 and any(has_time_words(m.content) for m in members):
        return False
    return all(not missing_words(m.content, kept.content) for m in members)


def _apart(
    b: _Builder, stated: Mapping[str, frozenset[str]], x: str, y: str, *, frames: bool
) -> bool:
    """Two entries that must not join: numbers that disagree, different subjects, time words
    that point to different days, or (`frames`: the subject tier) one frame with another value
    (engine/frames.py; in the first tier it costs restatements on the old labelled set)."""
    if _disagree(stated, x, y):
        return True
    a, c = b.current[x], b.current[y]
    return (
        subjects_differ(a.content, c.content)
        or episodes_differ(a.content, a.created_at, c.content, c.created_at)
        or (frames and frames_differ(a.content, c.content))
    )


def _never_together(
    b: _Builder,
    scores: Callable[[list[str]], np.ndarray],
    stated: Mapping[str, frozenset[str]],
    *,
    frames: bool,
) -> Callable[[list[str]], np.ndarray]:
    """Scores with −inf between entries that must not join (`_apart`), so that no linkage
    puts them in one group: numbers that disagree are offered as conflicts instead."""

    def guarded(ids: list[str]) -> np.ndarray:
        matrix = np.array(scores(ids), dtype=np.float64)
        memories = [b.current[i] for i in ids]
        texts = [m.content for m in memories]
        never = subjects_apart(texts) | dates_apart(texts, [m.created_at for m in memories])
        if frames:
            never |= frames_apart(texts)
        with_numbers = [(n, i) for n, i in enumerate(ids) if i in stated]
        for x, (n, a) in enumerate(with_numbers):
            for m, c in with_numbers[x + 1 :]:
                if _disagree(stated, a, c):
                    never[n, m] = never[m, n] = True
        if b.clashing:
            where = {ident: row for row, ident in enumerate(ids)}
            for one, other in b.clashing:
                i, j = where.get(one), where.get(other)
                if i is not None and j is not None:
                    never[i, j] = never[j, i] = True
        matrix[never] = -np.inf
        return matrix

    return guarded


def _numbers_stated(b: _Builder) -> dict[str, frozenset[str]]:
    if b.numbers is None:
        b.numbers = {m.id: found for m in b.eligible if (found := numbers_in(m.content))}
    return b.numbers


def _disagree(stated: Mapping[str, frozenset[str]], a: str, b: str) -> bool:
    """Each entry states a number the other does not ("I am 13" / "I am 24"): two facts that
    may contradict each other, not one memory said twice; a refinement that adds a number
    ("2 cats" / "2 cats and 1 dog") does not disagree."""
    na, nb = stated.get(a), stated.get(b)
    return bool(na and nb and na - nb and nb - na)


def _similarity_matrix(b: _Builder, method: str) -> Callable[[list[str]], np.ndarray]:
    """All scores among some eligible entries, as the candidate search scored them."""
    vectors = b.vectors if method == "memtui" else None
    return similarity_source(b.current, b.eligible, method, b.embeddings, vectors)


def _clauses(n: int) -> str:
    return f"{n} clause{'s' if n != 1 else ''}"


def _conflicts(run: PlanRun) -> None:
    b, profile, pairs, now = run.b, run.profile, run.pairs, run.now
    if profile.conflict_low is None or profile.conflict_high is None:
        return
    per_entry: dict[str, int] = {}
    chosen = []
    # memtui's own: only two values of one attribute conflict (engine/clashes.py)
    by_value = profile.merge_rule == "memtui"
    if by_value:
        scored = sorted([*pairs, *run.apart], key=lambda p: -p.score)
        pairs = _clash_pairs(b, [p for p in scored if p.score >= profile.conflict_low])
    proposed: set[frozenset[str]] = set()
    for p in pairs:  # highest scores first
        if not by_value and not profile.conflict_low <= p.score < profile.conflict_high:
            continue
        if by_value:
            p = Pair(_successor(b, p.a), _successor(b, p.b), p.score)
            if p.a == p.b or frozenset((p.a, p.b)) in proposed:
                continue
        if not (_live(b, p.a) and _live(b, p.b)):
            continue
        a, c = b.current[p.a], b.current[p.b]
        if a.category != c.category or a.category not in profile.conflict_categories:
            continue
        how = clash(a.content, c.content) if by_value else None
        if by_value and how is None:
            continue
        older, newer = sorted((a, c), key=lambda m: (m.created_at or now, b.position[m.id]))
        if per_entry.get(newer.id, 0) >= profile.conflicts_per_entry:
            continue
        per_entry[newer.id] = per_entry.get(newer.id, 0) + 1
        proposed.add(frozenset((older.id, newer.id)))
        chosen.append((older, newer, p.score, how))
    for older, newer, score, how in chosen:
        if older.id in b.locked or newer.id in b.locked:
            continue
        [retired] = retire([older], newer.id, now, Status.SUPERSEDED)
        successor = newer.with_(supersedes=(*newer.supersedes, older.id), updated_at=now)
        if how is None:
            rule = f"{profile.method} in [{profile.conflict_low:g}, {profile.conflict_high:g})"
            why = "may contradict each other"
        else:
            rule = f"memtui ≥ {profile.conflict_low:g}, {how} differ"
            why = CLASH_WORDS[how]
        b.add(
            "conflict",
            [older.id, newer.id],
            [retired, successor],
            f"{rule}, same category ({older.category})",
            {"score": score},
            f"Two {older.category} entries {why} ({profile.method} {score:.2f}); if so the "
            "newer supersedes the older. Needs a decision.",
            needs_decision=True,
        )


def _clash_pairs(b: _Builder, scored: list[Pair]) -> list[Pair]:
    """The candidate pairs at or above the conflict line, then the pairs that share what a
    clash needs although they score lower (`clash_candidates`), scored as the search does."""
    seen = {frozenset((p.a, p.b)) for p in scored}
    position = {m.id: n for n, m in enumerate(b.eligible)}
    vectors = b.vectors
    more = []
    for x, y in clash_candidates(b.eligible):
        if frozenset((x, y)) in seen:
            continue
        score = 0.0
        if vectors is not None:
            score = vector_cosine(vectors[position[x]], vectors[position[y]])
        more.append(Pair(x, y, score))
    more.sort(key=lambda p: -p.score)
    return [*scored, *more]


def _successor(b: _Builder, ident: str) -> str:
    """The entry an earlier action merged or absorbed `ident` into (itself if none)."""
    seen = {ident}
    memory = b.current[ident]
    while memory.status is Status.MERGED and memory.superseded_by in b.current:
        ident = memory.superseded_by
        if ident in seen:
            break
        seen.add(ident)
        memory = b.current[ident]
    return ident


def _protected(memories: Sequence[Memory], top: int) -> set[str]:
    """The entries with most incoming supersedes links (the Go system's protection)."""
    incoming: dict[str, int] = {}
    for m in memories:
        for _old in m.supersedes:
            incoming[m.id] = incoming.get(m.id, 0) + 1
    ranked = sorted(incoming, key=lambda i: -incoming[i])
    return set(ranked[:top])


def _expire(run: PlanRun) -> None:
    """Old entries of low importance expire (`expire`: deleted) or are archived."""
    b, profile, now = run.b, run.profile, run.now
    protected = _protected(run.snapshot, profile.protect_top)
    original = {m.id: m for m in run.snapshot}
    status = Status.DELETED if profile.expire_kind == "expire" else Status.ARCHIVED
    for memory in b.active():
        if memory.id in b.locked or memory.id in protected or memory.tenured:
            continue
        if memory.created_at is None:
            continue
        age = days_between(memory.created_at, now)
        if age <= profile.expire_after_days or memory.importance >= profile.expire_below:
            continue
        after = memory.with_(status=status, updated_at=now)
        verb = "expires" if status is Status.DELETED else "is archived"
        scores = {"age_days": age, "importance": memory.importance}
        reason = (
            f"{age:.0f} days old with importance {memory.importance:.2f} (below "
            f"{profile.expire_below:g}): {verb}, restorable from the ledger."
        )
        once = _once_important(profile, memory, original.get(memory.id))
        if once:
            scores["original_importance"] = original.get(memory.id, memory).importance
            reason = (
                f"{age:.0f} days old, importance now {memory.importance:.2f}, but this "
                f"{memory.category} was once important ({once}): it {verb} only if you "
                "decide so."
            )
        b.add(
            profile.expire_kind or "expire",
            [memory.id],
            [after],
            f"older than {profile.expire_after_days:g} days and importance < "
            f"{profile.expire_below:g}",
            scores,
            reason,
            needs_decision=bool(once),
        )


def _once_important(profile: Profile, memory: Memory, original: Memory | None) -> str:
    """Why `memory` must not go without a decision ("" when it may): an identity, preference
    or fact whose importance before decay (in the snapshot, or an `original_importance` field
    the store keeps) reached the guard line, or that was seen often enough."""
    if not profile.guard_once_important or memory.category not in profile.conflict_categories:
        return ""
    known = [memory.importance, original.importance if original else 0.0]
    stored = memory.extra.get("original_importance")
    if isinstance(stored, int | float) and not isinstance(stored, bool):
        known.append(float(stored))
    if max(known) >= profile.guard_importance:
        return f"importance {max(known):.2f}"
    if (memory.evidence_count or 0) >= profile.guard_evidence:
        return f"seen {memory.evidence_count} times"
    return ""


# -- thesearch --------------------------------------------------------------------------------


def effective_weight(memory: Memory, now: datetime, decay: DecayModel | None) -> float:
    """The skill's effective weight: confidence (importance), a bonus for entries a person
    wrote, usage, then half-life decay since last use."""
    source = {Source.USER: 1.2, Source.MANUAL: 1.1, Source.AUTO: 1.0}[memory.source]
    usage = 1.0 + 0.1 * math.log1p(memory.access_count)
    base = min(1.0, memory.importance * source * usage)
    if decay is None:
        return base
    return decay.value_at(memory.with_(importance=base), now)


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
    for group, members, scores in _each_group(b, capped_components(strong, b.order, b.cap), strong):
        winner = max(members, key=lambda m: effective_weight(m, now, decay))
        b.add(
            "merge",
            group,
            _absorbed(winner, members, now),
            f"{w:g}·jaro-winkler(title) + {1 - w:g}·cosine > {profile.thesearch_merge_score:g}",
            _span(scores),
            f"{len(group)} entries say the same (score {max(scores):.2f}): the one with the "
            f"highest effective weight ({effective_weight(winner, now, decay):.2f}) stays.",
        )


def _deprecate(run: PlanRun) -> None:
    b, profile, pairs, now, decay = run.b, run.profile, run.pairs, run.now, run.decay
    neighbours: dict[str, list[str]] = {}
    for p in pairs:
        neighbours.setdefault(p.a, []).append(p.b)
        neighbours.setdefault(p.b, []).append(p.a)
    for memory in b.active():
        if memory.id in b.locked or memory.created_at is None or memory.access_count:
            continue
        age = days_between(memory.created_at, now)
        weight = effective_weight(memory, now, decay)
        if age < profile.expire_after_days or weight > profile.deprecate_weight:
            continue
        newer = [
            b.current[n]
            for n in neighbours.get(memory.id, [])
            if _live(b, n) and (b.current[n].created_at or now) > memory.created_at
        ]
        replacement = max(newer, key=lambda m: m.created_at or now).id if newer else None
        after = memory.with_(status=Status.DEPRECATED, superseded_by=replacement, updated_at=now)
        link = f", replaced by {replacement}" if replacement else ""
        b.add(
            "deprecate",
            [memory.id],
            [after],
            f"≥ {profile.expire_after_days:g} days, weight ≤ {profile.deprecate_weight:g}, "
            "never accessed",
            {"age_days": age, "weight": weight},
            f"{age:.0f} days old, never used, effective weight {weight:.2f}: deprecated "
            f"(never deleted){link}.",
        )


def _promote(run: PlanRun) -> None:
    b, profile, pairs, now, decay = run.b, run.profile, run.pairs, run.now, run.decay
    proposed = [b.current[i] for i in b.order if b.current[i].status is Status.PROPOSED]
    if not proposed:
        return
    # a proposed entry conflicts with any entry it is close to, active or proposed (the
    # candidate search above saw active entries only)
    near = candidate_pairs([*proposed, *b.eligible], profile.method, _lowest_line(profile))
    conflicted = {i for p in [*pairs, *near] for i in (p.a, p.b)}
    for memory in proposed:
        ident = memory.id
        if ident in b.locked:
            continue
        evidence = memory.evidence_count or 0
        weight = effective_weight(memory, now, decay)
        age_hours = days_between(memory.created_at, now) * 24 if memory.created_at else 0.0
        if evidence >= profile.promote_evidence:
            why = f"seen {evidence} times"
        elif evidence >= profile.promote_evidence_with_weight and weight >= profile.promote_weight:
            why = f"seen {evidence} times with weight {weight:.2f}"
        elif age_hours >= profile.promote_after_hours and ident not in conflicted:
            why = f"{age_hours:.0f} hours old with no conflicting entry"
        else:
            continue
        b.add(
            "promote",
            [ident],
            [memory.with_(status=Status.ACTIVE, updated_at=now)],
            "evidence ≥ 3, or ≥ 2 with weight ≥ 0.5, or 24 h without conflicts",
            {"evidence": evidence, "weight": weight, "age_hours": age_hours},
            f"Proposed entry {why}: promoted to active.",
        )


def _hold_wholesale(run: PlanRun) -> None:
    """No user's store is emptied without a decision (engine/wholesale.py)."""
    run.warnings = hold_wholesale(run.b.actions, run.snapshot, run.profile.archive_line)


def _health(run: PlanRun) -> None:
    """The skill's health figures, for the store as it is now."""
    memories, actions, now, decay = run.snapshot, run.b.actions, run.now, run.decay
    last_run = run.last_run
    active = [m for m in memories if m.status is Status.ACTIVE]
    proposed = [m for m in memories if m.status is Status.PROPOSED]
    weights = [effective_weight(m, now, decay) for m in active]
    kinds = [a.kind for a in actions]
    run.health = {
        "active": len(active),
        "proposed": len(proposed),
        "average_weight": round(sum(weights) / len(weights), 4) if weights else 0.0,
        "duplicate_candidates": kinds.count("merge"),
        "stale_candidates": kinds.count("deprecate"),
        "last_run": last_run.isoformat() if last_run else None,
    }


# -- profiles as steps ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RuleSteps:
    """What a merge rule brings to a profile's steps."""

    merge: Step
    candidates: Step | None = None
    """The rule's own candidate search (default: `CANDIDATES`, a list of `Pair`s)."""
    floor: Callable[[Profile], float] | None = None
    """A score line of the rule's own below which the candidate search need not look."""
    conflicts: bool = True
    """Whether the profile's conflict line applies (thesearch finds none: it deprecates)."""
    finish: tuple[Step, ...] = ()


DECAY = Step("decay", 0.0, _decay)
CANDIDATES = Step("candidates", 0.1, _candidates)
CONFLICTS = Step("conflicts", 0.9, _conflicts)
_LONGTERM = RuleSteps(Step("merge", 0.8, _longterm_absorb_and_merge))
MERGE_RULE_STEPS: dict[MergeRule, RuleSteps] = {
    "pi": RuleSteps(
        Step("merge", 0.8, _pi_absorb_and_merge),
        candidates=Step("candidates", 0.1, _candidate_arrays),
    ),
    "longterm": _LONGTERM,
    "keep-base": _LONGTERM,
    "memtui": RuleSteps(
        Step("merge", 0.8, _memtui_absorb_and_merge),
        candidates=Step("candidates", 0.1, _candidates_apart),
    ),
    "thesearch": RuleSteps(
        Step("merge", 0.8, _thesearch_merge),
        floor=_thesearch_floor,
        conflicts=False,
        finish=(Step("promote", 0.97, _promote), Step("health", 0.99, _health)),
    ),
}
_EXPIRE = Step("expiry", 0.95, _expire)
GUARD = Step("guard", 0.995, _hold_wholesale)
EXPIRE_STEPS: dict[ExpireKind, Step] = {
    "expire": _EXPIRE,
    "archive": _EXPIRE,
    "deprecate": Step("expiry", 0.95, _deprecate),
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
