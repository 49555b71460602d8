"""A plan read from a file, checked against the store it is loaded for: made from this store
as it is now, and every action within its kind's rules (`engine/kinds.py`) and the format's;
wording edited in the file is refused by its seals (`seals.py`)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from memtui.engine.decay import DecayModel, slower_from
from memtui.engine.decay import model as decay_model
from memtui.engine.kinds import kind_of
from memtui.engine.plan import Action, Plan
from memtui.engine.similarity import pi_normalise
from memtui.engine.wholesale import ActiveCounts, active_counts, hold_wholesale, with_lines
from memtui.errors import ConflictError, MemtuiError
from memtui.model import MEMORY_FIELDS, Memory, Status, memory_values
from memtui.planfile.absorb_rows import AbsorbRow
from memtui.planfile.compact import PlanMismatch, expand
from memtui.planfile.seals import Seals, check_seals
from memtui.stores import MemoryStore
from memtui.times import format_iso
from memtui.traits import FormatTraits


@runtime_checkable
class ReadsRowsById(Protocol):
    """A store that holds none of its rows (`PgTable`): a plan is checked against the rows it
    names, read by id, and each user's active entries counted where the rows are."""

    def rows_named(self, ids: Collection[str]) -> tuple[dict[str, Memory], ActiveCounts]: ...

    def visible_count(self) -> int: ...


def check_made_for(store: MemoryStore, plan: Plan) -> None:
    """Refuse a plan made for another store (or another format)."""
    if plan.store_format != store.format_name:
        raise MemtuiError(
            f"the plan was made for a {plan.store_format} store; "
            f"{store.path} is {store.format_name}"
        )
    if not plan.store.strip() or not plan.store_fingerprint.strip():
        raise MemtuiError("the plan names no store (its 'store' or fingerprint is empty); refused")
    if Path(plan.store).expanduser().resolve() != store.path.resolve():
        raise MemtuiError(f"the plan was made for {plan.store}, not {store.path}")


def check_fits(
    store: MemoryStore,
    plan: Plan,
    pending: Mapping[str, Any] | None,
    seals: Seals,
    seal_key: bytes | None,
) -> None:
    """Fill a plan read from a file (`pending`: a version-2 file's compact records) from the
    store and refuse it unless it was made from this store as it is now and each action keeps
    its kind's and the format's rules; wording edited in its file is refused by its seals."""
    check_made_for(store, plan)
    if isinstance(store, ReadsRowsById):
        current, active = store.rows_named(_named(plan, pending))
        Fitting(store, current, active).check(plan, pending, seals, seal_key)
    else:
        Fitting(store).check(plan, pending, seals, seal_key)


class Fitting:
    """`check_fits` for one store, for a plan or for its parts one after another (the
    entries each part creates are kept, so that no later part creates them again)."""

    def __init__(
        self,
        store: MemoryStore,
        current: Mapping[str, Memory] | None = None,
        active: ActiveCounts | None = None,
    ) -> None:
        """`current`, `active`: the entries the plan names and each user's active entries
        counted (default: the store's)."""
        self.store = store
        if current is None:
            current = {m.id: m for m in store.memories()}
        self.current = current
        self.active = active_counts(current.values()) if active is None else active
        self.created: set[str] = set()

    def check(
        self,
        plan: Plan,
        pending: Mapping[str, Any] | None,
        seals: Seals,
        seal_key: bytes | None,
    ) -> None:
        """`check_fits` of `plan` (a part: its actions only), after `check_made_for`."""
        current = self.current
        try:
            stale, recomputed = (
                ([], frozenset()) if pending is None else expand(plan, pending, current)
            )
        except PlanMismatch as e:
            raise MemtuiError(f"{e}: not the plan memtui made — make a new one") from None
        if stale:
            shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
            raise ConflictError(
                f"{self.store.path}: changed since the plan was made; {len(stale)} of the "
                f"entries it touches differ ({shown}); nothing was written — make a new plan"
            )
        created = self.created
        decay = _plan_decay(plan)
        for action in plan.actions:
            if action.id in recomputed:  # a bulk row: only a decay's own value is left to check
                problem = None
                if kind_of(action.kind).decays:
                    problem = _decay_problem(action.before[0], action.after[0], plan, decay)
            else:
                problem = _action_problem(action, plan, self.store.traits, current, created)
            if problem:
                raise MemtuiError(
                    f"plan action {action.id} ({action.kind}) {problem}: not the plan memtui "
                    "made — make a new one"
                )
        check_seals(plan, seals, seal_key)
        # whatever the file says, a wholesale removal waits for a person's decision
        line = plan.params.get("archive_line")
        line = float(line) if isinstance(line, int | float) and not isinstance(line, bool) else None
        held = hold_wholesale(plan.actions, self.active, line)
        plan.warnings = with_lines(plan.warnings, held)


def _named(plan: Plan, pending: Mapping[str, Any] | None) -> set[str]:
    """Every entry id the plan's actions (and their compact records) name."""
    ids = {t for a in plan.actions for t in a.targets}
    ids.update(m.id for a in plan.actions for m in (*a.before, *a.after))
    for raw in (pending or {}).values():
        if isinstance(raw, list):
            ids.add(str(raw[1]))
        elif isinstance(raw, AbsorbRow):
            ids.update(raw.entries)
        elif isinstance(raw, dict):
            ids.update(str(f[0]) for f in raw.get("found") or ())
            ids.update(a for a in raw.get("after") or () if isinstance(a, str))
    return ids


_ALWAYS = frozenset({"updated_at", "version"})
"""What every change to an entry may change."""
_RETIRING = frozenset({"status", "superseded_by", "superseded_at"})
"""What retiring an entry into another changes."""


def _action_problem(
    action: Action,
    plan: Plan,
    traits: FormatTraits,
    current: Mapping[str, Memory],
    created: set[str],
) -> str | None:
    """What breaks the rules of its kind and of the store's format in one action, if anything
    (the action's own parameters recomputed where they determine the result)."""
    before = {m.id: m for m in action.before}
    after_ids = [m.id for m in action.after]
    if len(before) != len(action.before) or len(set(after_ids)) != len(after_ids):
        return "names an entry twice"
    if action.targets != list(dict.fromkeys([*before, *after_ids])):
        return "has targets that are not the entries it changes"
    if not set(before) <= set(after_ids):
        return "drops an entry it found"
    for ident in before:
        if ident not in current and ident not in created:
            return f"targets {ident!r}, which the store does not hold"
    kind = kind_of(action.kind)
    new = [m for m in action.after if m.id not in before]
    if new and not kind.creates:
        return f"creates an entry ({new[0].id!r}), which a {action.kind} never does"
    for m in new:
        if m.id in current or m.id in created:
            return f"creates {m.id!r}, an id the store already holds"
    members = list(action.before)
    if kind.combines and len({m.user_id for m in members}) > 1:
        # pi's own dedupe folds identical content store-wide, whoever it belongs to
        pi_fold = traits.folds_across_users and (
            len({pi_normalise(m.content) for m in members}) == 1
        )
        if not (kind.folds_identical and pi_fold):
            return "combines entries of different users"
    retired = [m for m in action.after if m.id in before and m.status is not before[m.id].status]
    if kind.retires and not retired:
        return "merges nothing (no entry is retired into another)"
    for m in action.after:
        problem = _record_problem(m, before.get(m.id), action, plan, traits, members)
        if problem:
            return problem
    created.update(m.id for m in new)
    return None


def _record_problem(
    after: Memory,
    was: Memory | None,
    action: Action,
    plan: Plan,
    traits: FormatTraits,
    members: list[Memory],
) -> str | None:
    kind = kind_of(action.kind)
    cap = traits.content_cap
    too_long = cap is not None and len(after.content) > cap
    if too_long and (was is None or after.content != was.content):
        return (
            f"gives {after.id!r} {len(after.content):,} characters of content; "
            f"{plan.store_format} stores cap it at {cap}"
        )
    if after.status is Status.QUARANTINED and (was is None or was.status is not Status.QUARANTINED):
        return f"quarantines {after.id!r}, which no plan does"
    if after.status is Status.PROPOSED and not traits.holds(Status.PROPOSED):
        return (
            f"gives {after.id!r} the status proposed, which a {plan.store_format} store cannot hold"
        )
    if kind.combines:
        if members:
            cap_access = sum(m.access_count for m in members)
            cap_evidence = sum(m.evidence_count or 1 for m in members)
            boost = float(plan.params.get("absorb_boost") or 0.0)
            cap_importance = max(m.importance for m in members) + boost + 1e-9
            if after.access_count > max(cap_access, was.access_count if was else 0):
                return f"gives {after.id!r} more accesses than its entries had"
            if (after.evidence_count or 0) > max(cap_evidence, (was and was.evidence_count) or 0):
                return f"gives {after.id!r} more evidence than its entries had"
            if after.importance > max(cap_importance, was.importance if was else 0.0):
                return f"raises {after.id!r} above its entries' importance"
            floor = min(m.importance for m in members) - 1e-9
            if after.status is Status.ACTIVE and after.importance < floor:
                return f"lowers {after.id!r} below its entries' importance"
        if was is None:
            return None
        if after.id != was.id or after.user_id != was.user_id:
            return f"moves {was.id!r} to another id or user"
        if after.status is not was.status:
            if _changed(was, after) - _RETIRING - _ALWAYS:
                return f"changes more than the status of {was.id!r}, which it retires"
            if after.superseded_by not in action.targets:
                return f"retires {was.id!r} into an entry it does not name"
        return None
    if was is None:
        return f"creates {after.id!r}"
    changed = _changed(was, after) - _ALWAYS
    extra = changed - kind.may_change
    if extra:
        return f"changes {', '.join(sorted(extra))} of {was.id!r}, which a {kind.name} never does"
    if kind.status_after is not None and after.status not in kind.status_after:
        return f"gives {was.id!r} the status {after.status.value}, not what a {kind.name} gives"
    if kind.decays:
        return _decay_problem(was, after, plan, _plan_decay(plan))
    return None


def _plan_decay(plan: Plan) -> DecayModel | None:
    """The decay model the plan's parameters name (None: none, or one memtui does not know)."""
    name, rate = plan.params.get("decay_model"), plan.params.get("decay_rate")
    slower = slower_from(plan.params.get("decay_slower"))
    if not isinstance(name, str) or not isinstance(rate, int | float) or slower is None:
        return None
    try:
        return decay_model(name, float(rate), slower=slower)
    except MemtuiError:
        return None


def _decay_problem(was: Memory, after: Memory, plan: Plan, decay: DecayModel | None) -> str | None:
    name, rate = plan.params.get("decay_model"), plan.params.get("decay_rate")
    if after.importance > was.importance:
        return f"raises the importance of {was.id!r}"
    if not isinstance(name, str) or not isinstance(rate, int | float):
        return None
    if decay is None:
        return f"names an unknown decay model {name!r}"
    expected = decay.value_at(was, plan.now)
    if abs(expected - after.importance) > 1e-9:
        return (
            f"sets the importance of {was.id!r} to {after.importance:g}; its own decay "
            f"({name} ×{rate:g}/day to {format_iso(plan.now)}) gives {expected:g}"
        )
    return None


def _changed(was: Memory, after: Memory) -> set[str]:
    """The fields (as `Memory.to_dict` names them) that differ."""
    return {
        name
        for name, a, b in zip(MEMORY_FIELDS, memory_values(was), memory_values(after), strict=True)
        if a != b
    }
