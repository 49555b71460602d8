"""`make_plan`: the runner of the consolidation rules (engine/rules/) over a snapshot, as
reviewable actions.

Order (it matters, rules/table.py `steps_for`): decay → absorb duplicates → merge → conflicts →
expire / archive / deprecate → protect → promote. Each step sees the entries as the earlier
steps left them, and each action records the earlier actions on the same entries as its
dependencies.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memtui.closing import Closing
from memtui.engine.decay import DecayModel, decay_for, decay_for_store
from memtui.engine.embedded import Embeddings
from memtui.engine.ids import IdMaker, TakenIds
from memtui.engine.plan import FOLLOWS, Action, Plan
from memtui.engine.profiles import Profile
from memtui.engine.rules.expire import protected_entries
from memtui.engine.rules.guard import GUARD
from memtui.engine.rules.health import HEALTH, health_figures
from memtui.engine.rules.pi_dedupe_fold import DEDUPE_RULE, redo_pi_dedupe
from memtui.engine.rules.run import Builder, MergedText, Place, PlanRun, Progress, Step
from memtui.engine.rules.table import EXPIRE_STEPS, MERGE_RULE_STEPS, lowest_line, steps_for
from memtui.engine.wholesale import hold_wholesale
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.model import Memory, Status
from memtui.times import to_base36, to_epoch_ms
from memtui.traits import OWN_IDS, IdStyle

__all__ = [
    "DEDUPE_RULE",
    "EXPIRE_STEPS",
    "MERGE_RULE_STEPS",
    "Cancelled",
    "Progress",
    "Step",
    "StoreWide",
    "UserPlan",
    "UserSummary",
    "by_user",
    "finish_head",
    "finish_user",
    "in_key_order",
    "join_in_order",
    "join_users",
    "make_plan",
    "plan_each_user",
    "plan_user",
    "plans_by_user",
    "redo_pi_dedupe",
    "steps_for",
    "store_wide",
    "stream_head",
    "streams_by_user",
]


class Cancelled(MemtuiError):
    """Planning was cancelled by the person waiting for it."""


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
    in for pi's model when given: the merged wording of a cluster, or None for a veto."""
    report = _reporter(progress, cancelled)
    b = Builder(memories, ids, now, profile.cluster_max)
    run = _run(b, memories, profile, now, decay_for_store(profile, memories), report)
    run.session = session or run.session
    run.merged_text, run.last_run = merged_text, last_run
    if profile.method == "memtui":
        b.embeddings = embeddings
    for n, step in enumerate(steps_for(profile)):
        report(step.name, step.start)
        b.step = n
        step.run(run)
    report("done", 1.0)
    if plans_by_user(profile):
        b.actions = _in_user_order(b, memories, ids, now)
    return _plan_of(run, store, store_format, fingerprint)


def _in_user_order(
    b: Builder, memories: Sequence[Memory], ids: IdStyle, now: datetime
) -> list[Action]:
    """The whole store's actions as a plan made user by user has them: each user's in turn,
    the users in the order they first appear, renumbered, their new ids drawn again in that
    order (`join_in_order`)."""
    rank = {user: n for n, user in enumerate(dict.fromkeys(m.user_id for m in memories))}
    if len(rank) < 2:
        return b.actions
    seeds: dict[int, Seeds] = {}
    for n, ident, members in b.seeds:
        seeds.setdefault(n, []).append((ident, members))
    parts: list[list[tuple[Action, Seeds]]] = [[] for _ in rank]
    for n, action in enumerate(b.actions):
        parts[rank[_user_of(action)]].append((action, seeds.get(n, [])))
    return list(join_in_order(parts, ids, now, TakenIds.of(m.id for m in memories)))


def _user_of(action: Action) -> str | None:
    return (action.before or action.after)[0].user_id


def _reporter(progress: Progress | None, cancelled: Callable[[], bool] | None) -> Progress:
    def report(name: str, fraction: float) -> None:
        if cancelled is not None and cancelled():
            raise Cancelled("planning cancelled")
        if progress is not None:
            progress(name, fraction)

    return report


def _run(
    b: Builder,
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    decay: DecayModel | None,
    report: Progress,
) -> PlanRun:
    session = f"memtui-plan-{to_base36(to_epoch_ms(now))}"
    return PlanRun(
        b, profile, now, memories, decay, session, None, None, report, lowest_line(profile)
    )


def _plan_of(run: PlanRun, store: str, store_format: str, fingerprint: str) -> Plan:
    profile = run.profile
    params = profile.to_dict()
    if run.decay is not None and run.decay != decay_for(profile):  # the store's own (decay.py)
        params["decay_model"] = run.decay.name
        params["decay_slower"] = dict(run.decay.slower)
    params["similarity"] = _similarity_used(profile, run.b.embeddings)
    plan = Plan(store, store_format, fingerprint, profile.name, run.now, params, run.b.actions)
    if run.health is not None:
        plan.health = run.health
    plan.warnings = run.warnings
    return plan


# -- user by user -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StoreWide:
    """What planning one user needs to know of the whole store, found once."""

    decay: DecayModel | None
    protected: frozenset[str]
    taken: TakenIds
    origin: Mapping[str, int]
    """Each entry's place in the store."""
    first_active: Mapping[str | None, int] = field(default_factory=dict)
    """Each user's first active entry's place (the wholesale guard's order of users)."""


@dataclass(frozen=True, slots=True)
class UserPlan:
    """One user's actions (ids of their own), where each goes in the whole plan, and the ids
    they made."""

    actions: list[Action]
    keys: list[Place]
    seeds: list[tuple[int, str, tuple[str, ...]]]
    """Each new id: its action, the id, the members it was drawn from (`Builder.seeds`)."""


def by_user(memories: Sequence[Memory]) -> list[list[Memory]]:
    """Each user's entries in store order, the users in the order they first appear."""
    groups: dict[str | None, list[Memory]] = {}
    for m in memories:
        groups.setdefault(m.user_id, []).append(m)
    return list(groups.values())


def plans_by_user(profile: Profile) -> bool:
    """Whether the profile's plan can be made user by user (its merge rule says)."""
    return MERGE_RULE_STEPS[profile.merge_rule].per_user


def store_wide(memories: Sequence[Memory], profile: Profile) -> StoreWide:
    return StoreWide(
        decay_for_store(profile, memories),
        frozenset(protected_entries(memories, profile.protect_top)),
        TakenIds.of(m.id for m in memories),
        {m.id: n for n, m in enumerate(memories)},
        _first_active(memories),
    )


def _first_active(memories: Sequence[Memory]) -> dict[str | None, int]:
    out: dict[str | None, int] = {}
    for n, m in enumerate(memories):
        if m.status is Status.ACTIVE and m.user_id not in out:
            out[m.user_id] = n
    return out


def plan_user(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    wide: StoreWide,
    *,
    ids: IdStyle = OWN_IDS,
    embeddings: Embeddings | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> UserPlan:
    """One user's part of the plan: every step but the store-wide ones (`Step.store_wide`)."""
    report = _reporter(None, cancelled)
    b = Builder(memories, ids, now, profile.cluster_max, taken=wide.taken, origin=wide.origin)
    if profile.method == "memtui":
        b.embeddings = embeddings
    run = _run(b, memories, profile, now, wide.decay, report)
    run.protected = wide.protected
    for n, step in enumerate(steps_for(profile)):
        if not step.store_wide:
            report(step.name, step.start)
            b.step = n
            step.run(run)
    return UserPlan(b.actions, b.keys, b.seeds)


def join_users(
    parts: Sequence[UserPlan],
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    wide: StoreWide,
    *,
    store: str = "",
    store_format: str = "native",
    ids: IdStyle = OWN_IDS,
    fingerprint: str = "",
    last_run: datetime | None = None,
    embeddings: Embeddings | None = None,
) -> Plan:
    """The users' parts as one plan (`join_in_order`), then the store-wide steps over it."""
    actions = list(join_in_order(map(in_key_order, parts), ids, now, wide.taken))
    b = Builder((), ids, now, profile.cluster_max, taken=wide.taken)
    b.actions = actions
    if profile.method == "memtui":
        b.embeddings = embeddings
    run = _run(b, memories, profile, now, wide.decay, _reporter(None, None))
    run.last_run = last_run
    for step in steps_for(profile):
        if step.store_wide:
            step.run(run)
    return _plan_of(run, store, store_format, fingerprint)


# -- streamed: the plan's actions one at a time -------------------------------------------------

_STREAMED_WIDE = (GUARD, HEALTH)
"""The store-wide steps a streamed plan does without the whole plan: the guard user by user
(`finish_user`), the health figures from counts (`stream_head`)."""


def streams_by_user(profile: Profile) -> bool:
    """Whether the profile's plan can be made user by user and joined as a stream."""
    wide = [s for s in steps_for(profile) if s.store_wide]
    return plans_by_user(profile) and all(s in _STREAMED_WIDE for s in wide)


@dataclass(slots=True)
class UserSummary:
    """What the streamed plan's header and counts need of one user's part."""

    kinds: Counter[str]
    touched: int
    waiting: int
    warning: tuple[int, str] | None
    """The wholesale guard's line for the user and where it goes (`StoreWide.first_active`)."""


def finish_user(
    part: UserPlan, memories: Sequence[Memory], profile: Profile, wide: StoreWide
) -> UserSummary:
    """The store-wide steps' share of one user's part (the guard holds its actions here, as
    the whole-store guard would: no action touches another user's entries), and its counts."""
    warning = None
    if GUARD in steps_for(profile):
        lines = hold_wholesale(
            part.actions, memories, profile.archive_line, len(wide.first_active) <= 1
        )
        if lines:
            [line] = lines  # one user's entries: one line at most
            warning = (wide.first_active[memories[0].user_id], line)
    return UserSummary(
        Counter(a.kind for a in part.actions),
        len({t for a in part.actions for t in a.targets}),
        sum(a.needs_decision for a in part.actions),
        warning,
    )


def stream_head(
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    wide: StoreWide,
    *,
    store: str = "",
    store_format: str = "native",
    ids: IdStyle = OWN_IDS,
    fingerprint: str = "",
    embeddings: Embeddings | None = None,
) -> Plan:
    """The streamed plan without its actions, as known before planning (`finish_head` adds
    what the users' counts say)."""
    b = Builder((), ids, now, profile.cluster_max, taken=wide.taken)
    if profile.method == "memtui":
        b.embeddings = embeddings
    run = _run(b, memories, profile, now, wide.decay, _reporter(None, None))
    return _plan_of(run, store, store_format, fingerprint)


def finish_head(
    head: Plan,
    memories: Sequence[Memory],
    profile: Profile,
    now: datetime,
    wide: StoreWide,
    summaries: Iterable[UserSummary],
    last_run: datetime | None = None,
) -> None:
    """The streamed plan's warnings and health, from every user's counts."""
    kinds: Counter[str] = Counter()
    warnings = []
    for summary in summaries:
        kinds.update(summary.kinds)
        if summary.warning is not None:
            warnings.append(summary.warning)
    if HEALTH in steps_for(profile):
        head.health = health_figures(memories, kinds, now, wide.decay, last_run)
    head.warnings = [line for _, line in sorted(warnings)]


Seeds = list[tuple[str, tuple[str, ...]]]
"""The new ids an action drew, in the order drawn, each with the members it was drawn from."""
Ordered = Iterable[tuple[Action, Seeds]]
"""One user's actions in plan order, each with the ids it drew."""


def in_key_order(part: UserPlan) -> list[tuple[Action, Seeds]]:
    """A user's actions in the order of their keys (then as made): the whole-store plan's
    order of that user's actions."""
    seeds: dict[int, Seeds] = {}
    for n, ident, members in part.seeds:
        seeds.setdefault(n, []).append((ident, members))
    order = sorted(range(len(part.actions)), key=lambda n: (part.keys[n], n))
    return [(part.actions[n], seeds.get(n, [])) for n in order]


def join_in_order(
    parts: Iterable[Ordered], style: IdStyle, now: datetime, taken: TakenIds
) -> Iterator[Action]:
    """The users' actions as one plan, one at a time, user after user (`parts` in the order
    of the users, each read once): renumbered, and their new ids drawn again in this order
    by one `IdMaker` over the store's ids (`taken`), since users planned apart may have drawn
    the same id or numbered theirs alike. The actions are renamed in place."""
    return Closing(_joined(iter(parts), style, now, taken), parts)


def _joined(
    parts: Iterator[Ordered], style: IdStyle, now: datetime, taken: TakenIds
) -> Iterator[Action]:
    maker = IdMaker(style, (), now, index=taken)
    number = 0
    for part in parts:
        mine: dict[str, str] = {}
        renamed: dict[str, str] = {}
        for action, seeds in part:
            number += 1
            mine[action.id] = f"a{number}"
            for ident, members in seeds:
                again = maker.new("|".join(renamed.get(m, m) for m in members))
                if again != ident:
                    renamed[ident] = again
            if FOLLOWS in action.details:
                follows = [mine[i] for i in action.details[FOLLOWS]]
                action.details = {**action.details, FOLLOWS: follows}
            if action.depends_on:
                action.depends_on = sorted(
                    (mine[d] for d in action.depends_on), key=lambda a: int(a[1:])
                )
            action.id = mine[action.id]
            if renamed:
                _rename(action, renamed)
            yield action


def _rename(action: Action, ids: Mapping[str, str]) -> None:
    """The action with the entries it names called by their new ids."""
    action.targets = [ids.get(t, t) for t in action.targets]
    action.before = [_renamed(m, ids) for m in action.before]
    action.after = [_renamed(m, ids) for m in action.after]
    provenance = action.details.get("provenance")
    if isinstance(provenance, dict):
        provenance = {
            **provenance,
            "base": ids.get(provenance["base"], provenance["base"]),
            "spans": [[a, z, ids.get(i, i)] for a, z, i in provenance["spans"]],
            **{
                key: [{**c, "member": ids.get(c["member"], c["member"])} for c in provenance[key]]
                for key in ("added", "left_out")
                if key in provenance
            },
        }
        action.details = {**action.details, "provenance": provenance}


def _renamed(m: Memory, ids: Mapping[str, str]) -> Memory:
    named = [m.id, m.superseded_by, *m.supersedes]
    if not any(i in ids for i in named if i is not None):
        return m
    return m.with_(
        id=ids.get(m.id, m.id),
        superseded_by=None
        if m.superseded_by is None
        else ids.get(m.superseded_by, m.superseded_by),
        supersedes=tuple(ids.get(i, i) for i in m.supersedes),
    )


def plan_each_user(
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
) -> Plan:
    """`make_plan`, one user at a time in this process (one user's working set at a time);
    the same plan, byte for byte."""
    users = by_user(memories)
    if len(users) < 2 or not plans_by_user(profile):
        return make_plan(
            memories,
            profile,
            now,
            store=store,
            store_format=store_format,
            ids=ids,
            fingerprint=fingerprint,
            progress=progress,
            cancelled=cancelled,
            last_run=last_run,
            embeddings=embeddings,
        )
    report = _reporter(progress, cancelled)
    with gc_paused():
        wide = store_wide(memories, profile)
        parts = []
        for done, entries in enumerate(users):
            report(f"users {done}/{len(users)}", done / len(users))
            parts.append(
                plan_user(
                    entries,
                    profile,
                    now,
                    wide,
                    ids=ids,
                    embeddings=embeddings,
                    cancelled=cancelled,
                )
            )
        report(f"users {len(users)}/{len(users)}", 1.0)
        return join_users(
            parts,
            memories,
            profile,
            now,
            wide,
            store=store,
            store_format=store_format,
            ids=ids,
            fingerprint=fingerprint,
            last_run=last_run,
            embeddings=embeddings,
        )


def _similarity_used(profile: Profile, embeddings: Embeddings | None) -> dict[str, Any]:
    if embeddings is None:
        return {"method": profile.method}
    return {"method": "memtui+embed", "model": embeddings.model}
