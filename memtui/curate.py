"""Changing a store with the engine: apply a plan, merge and supersede by hand, restore, and
read an entry's lineage. Each change is one store transaction (see `Store.commit`).

Shared by the CLI and the TUI; the engine computes, the store commits.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from memtui.engine.decay import DecayModel, slower_from
from memtui.engine.decay import model as decay_model
from memtui.engine.ids import IdMaker, TakenIds
from memtui.engine.merging import merge_entries, retire
from memtui.engine.plan import Plan, full_json, full_json_parts, plan_changes, plan_from_dict
from memtui.engine.plan_compact import PlanMismatch, compact_plan, expand
from memtui.engine.profiles import get_profile, profile_for_format
from memtui.engine.similarity import pi_normalise
from memtui.engine.wholesale import hold_wholesale, with_lines
from memtui.engine.wording import rule_wording
from memtui.errors import ConflictError, MemtuiError, NotFoundError
from memtui.gcpause import gc_paused
from memtui.jsonout import dumps
from memtui.model import MEMORY_FIELDS, Memory, Status, memory_values
from memtui.plan_seal import check_seals, read_seals, seals_for
from memtui.stores import Actor, Change, MemoryStore, Transaction
from memtui.stores.files import atomic_write
from memtui.stores.ledger import ChangeImage
from memtui.stores.pi_format import PI_CONTENT_CAP
from memtui.stores.pi_json import PiJsonError, read_checked
from memtui.stores.progress import CommitProgress
from memtui.times import format_iso
from memtui.views import entries, kind_counts

RETIRED = (Status.MERGED, Status.SUPERSEDED)


# -- plans ------------------------------------------------------------------------------------


def check_plan_fits(store: MemoryStore, plan: Plan, seal_key: bytes | None = None) -> None:
    """Refuse a plan that was not made from this store as it is now, or whose actions break
    their kind's or the format's rules; wording edited in its file is refused by its seals."""
    checked = (str(store.path), store.fingerprint, seal_key)
    if plan.fits == checked:  # nothing changed since it passed (apply checks again)
        return
    if plan.store_format != store.format_name:
        raise MemtuiError(
            f"the plan was made for a {plan.store_format} store; "
            f"{store.path} is {store.format_name}"
        )
    if not plan.store.strip() or not plan.store_fingerprint.strip():
        raise MemtuiError("the plan names no store (its 'store' or fingerprint is empty); refused")
    if Path(plan.store).expanduser().resolve() != store.path.resolve():
        raise MemtuiError(f"the plan was made for {plan.store}, not {store.path}")
    current = {m.id: m for m in store.memories()}
    try:
        stale, recomputed = expand(plan, current)
    except PlanMismatch as e:
        raise MemtuiError(f"{e}: not the plan memtui made — make a new one") from None
    if stale:
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        raise ConflictError(
            f"{store.path}: changed since the plan was made; {len(stale)} of the entries it "
            f"touches differ ({shown}); nothing was written — make a new plan"
        )
    created: set[str] = set()
    decay = _plan_decay(plan)
    for action in plan.actions:
        if action.id in recomputed:  # a bulk row: only a decay's own value is left to check
            problem = None
            if action.kind == "decay":
                problem = _decay_problem(action.before[0], action.after[0], plan, decay)
        else:
            problem = _action_problem(action, plan, store.format_name, current, created)
        if problem:
            raise MemtuiError(
                f"plan action {action.id} ({action.kind}) {problem}: not the plan memtui "
                "made — make a new one"
            )
    check_seals(plan, seal_key)
    # whatever the file says, a wholesale removal waits for a person's decision
    line = plan.params.get("archive_line")
    line = float(line) if isinstance(line, int | float) and not isinstance(line, bool) else None
    plan.warnings = with_lines(plan.warnings, hold_wholesale(plan.actions, current.values(), line))
    plan.fits = checked


# What each kind of action may change in an entry it keeps (retired entries: `_RETIRING`).
_ALWAYS = frozenset({"updated_at", "version"})
_MAY_CHANGE = {
    "decay": frozenset({"importance", "last_decayed_at"}),
    "archive": frozenset({"status"}),
    "expire": frozenset({"status"}),
    "deprecate": frozenset({"status", "superseded_by", "superseded_at"}),
    "promote": frozenset({"status"}),
}
_STATUS_AFTER = {
    "archive": {Status.ARCHIVED},
    "expire": {Status.DELETED, Status.ARCHIVED},
    "deprecate": {Status.DEPRECATED},
    "promote": {Status.ACTIVE},
}
_RETIRING = frozenset({"status", "superseded_by", "superseded_at"})
_COMBINING = frozenset({"merge", "absorb", "supersede", "conflict", "insight"})
_CREATING = frozenset({"merge", "insight"})


def _action_problem(
    action: Any, plan: Plan, store_format: str, current: dict[str, Memory], created: set[str]
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
    new = [m for m in action.after if m.id not in before]
    if new and action.kind not in _CREATING:
        return f"creates an entry ({new[0].id!r}), which a {action.kind} never does"
    for m in new:
        if m.id in current or m.id in created:
            return f"creates {m.id!r}, an id the store already holds"
    members = list(action.before)
    if action.kind in _COMBINING and len({m.user_id for m in members}) > 1:
        # pi's own dedupe folds identical content store-wide, whoever it belongs to
        pi_fold = store_format == "pi" and len({pi_normalise(m.content) for m in members}) == 1
        if not (action.kind == "absorb" and pi_fold):
            return "combines entries of different users"
    retired = [m for m in action.after if m.id in before and m.status is not before[m.id].status]
    if action.kind in ("merge", "absorb") and not retired:
        return "merges nothing (no entry is retired into another)"
    for m in action.after:
        problem = _record_problem(m, before.get(m.id), action, plan, store_format, members)
        if problem:
            return problem
    created.update(m.id for m in new)
    return None


def _record_problem(
    after: Memory,
    was: Memory | None,
    action: Any,
    plan: Plan,
    store_format: str,
    members: list[Memory],
) -> str | None:
    kind = action.kind
    too_long = len(after.content) > PI_CONTENT_CAP and (was is None or after.content != was.content)
    if store_format == "pi" and too_long:
        return (
            f"gives {after.id!r} {len(after.content):,} characters of content; pi stores cap "
            f"it at {PI_CONTENT_CAP}"
        )
    if after.status is Status.QUARANTINED and (was is None or was.status is not Status.QUARANTINED):
        return f"quarantines {after.id!r}, which no plan does"
    if store_format == "pi" and after.status is Status.PROPOSED:
        return f"gives {after.id!r} the status proposed, which a pi store cannot hold"
    if kind in _COMBINING:
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
    extra = changed - _MAY_CHANGE.get(kind, frozenset())
    if extra:
        return f"changes {', '.join(sorted(extra))} of {was.id!r}, which a {kind} never does"
    if kind in _STATUS_AFTER and after.status not in _STATUS_AFTER[kind]:
        return f"gives {was.id!r} the status {after.status.value}, not what a {kind} gives"
    if kind == "decay":
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


def apply_plan(
    store: MemoryStore,
    plan: Plan,
    approved: Sequence[str] | None,
    *,
    now: datetime,
    seal_key: bytes | None = None,
    progress: CommitProgress | None = None,
) -> Transaction:
    """Apply the approved actions (default: all that need no decision) as one transaction.

    Refused, with nothing written, when the store changed in the entries the plan touches.
    """
    check_plan_fits(store, plan, seal_key)
    chosen = list(approved) if approved is not None else plan.default_approved()
    if not chosen:
        raise MemtuiError("no action is approved; nothing to apply")
    planned = plan_changes(plan, chosen)
    if not planned:
        raise MemtuiError("the approved actions change nothing")
    kinds = [plan.action(a).kind for a in chosen]
    summary = kind_counts(kinds)
    actors = {plan.action(a).actor for a in chosen}
    return store.commit(
        [Change(c.before, c.after) for c in planned],
        actor=Actor.LLM if Actor.LLM in actors else Actor.PLAN,
        kind="plan",
        reason=f"{plan.profile} plan: {summary}",
        now=now,
        details={"profile": plan.profile, "actions": chosen, "plan_now": plan.now.isoformat()},
        progress=progress,
    )


# A version-1 plan holds a before and after record per touched entry: far below this for any
# real store (version 2 holds only what changes).
PLAN_SIZE_LIMIT = 256 * 1024 * 1024
# A version-2 file of 1M entries / 1,000 users is 382 MB (`longterm`); reading one takes about
# 9 bytes of memory per byte of file (3.5 GB for that one, beside the store's 2.5 GB).
PLAN_V2_SIZE_LIMIT = 512 * 1024 * 1024
_V2_HEAD = re.compile(rb'^\{\s*"format"\s*:\s*"memtui-plan"\s*,\s*"version"\s*:\s*2\s*[,}]')


def _plan_bytes(path: str) -> bytes:
    """A plan file's bytes: only from a regular file (a FIFO or a device could block or never
    end) and only up to PLAN_SIZE_LIMIT, or PLAN_V2_SIZE_LIMIT for a file that starts as a
    version-2 plan."""
    try:
        # non-blocking, so that opening a FIFO returns at once instead of waiting for a writer
        fd = os.open(Path(path).expanduser(), os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise MemtuiError(f"{path}: no such plan file") from None
    except OSError as e:
        raise MemtuiError(f"{path}: cannot read it ({e.strerror})") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        if stat.S_ISDIR(st.st_mode):
            raise MemtuiError(f"{path}: is a directory, not a plan file")
        raise MemtuiError(f"{path}: is not a regular file; plans are read from files only")
    with os.fdopen(fd, "rb") as f:
        try:
            head = f.read(256)
            limit, name = (
                (PLAN_V2_SIZE_LIMIT, "PLAN_V2_SIZE_LIMIT")
                if _V2_HEAD.match(head)
                else (PLAN_SIZE_LIMIT, "PLAN_SIZE_LIMIT")
            )
            if st.st_size > limit:
                raise MemtuiError(
                    f"{path}: is {st.st_size:,} bytes, over the plan size limit of "
                    f"{limit:,} bytes ({name}); not a plan memtui wrote"
                )
            data = head + f.read(limit + 1 - len(head))
        except OSError as e:
            raise MemtuiError(f"{path}: cannot read it ({e.strerror})") from None
        if len(data) > limit:
            raise MemtuiError(f"{path}: grew past the plan size limit of {limit:,} bytes")
        return data


def read_plan(path: str) -> Plan:
    with gc_paused():  # a million actions and their records, none in a reference cycle
        return _read_plan(path)


def _read_plan(path: str) -> Plan:
    data = _plan_bytes(path)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as e:
        try:
            value = read_checked(data)  # the plan of a store with a lone surrogate in it
        except PiJsonError:
            raise MemtuiError(
                f"{path}: not a plan file (not valid JSON: {str(e).split(':')[0]})"
            ) from None
    seals = read_seals(value.pop("seals", None), path) if isinstance(value, dict) else ("", {})
    decided = value.pop("decisions", None) if isinstance(value, dict) else None
    plan = plan_from_dict(value, path)
    plan.seals = seals
    plan.decisions = _read_decisions(decided, plan, path)
    return plan


def _read_decisions(raw: object, plan: Plan, source: str) -> dict[str, bool]:
    """A saved plan's approvals and rejections (only of actions it holds)."""
    if raw is None:
        return {}
    lists = raw if isinstance(raw, dict) else {}
    approved, rejected = lists.get("approved", []), lists.get("rejected", [])
    if not isinstance(raw, dict) or not all(
        isinstance(ids, list) and all(isinstance(i, str) for i in ids)
        for ids in (approved, rejected)
    ):
        raise MemtuiError(
            f"{source}: not a usable plan file ('decisions' is not what memtui writes)"
        )
    known = {a.id for a in plan.actions}
    unknown = [i for i in (*approved, *rejected) if i not in known]
    if unknown:
        raise MemtuiError(
            f"{source}: its decisions name {unknown[0]!r}, an action it does not hold"
        )
    return {**dict.fromkeys(approved, True), **dict.fromkeys(rejected, False)}


_PLAN_HEAD = re.compile(rb'^\{\s*"format"\s*:\s*"memtui-plan"')


def plan_bytes(
    plan: Plan, version: int = 2, *, indent: bool = True, seal_key: bytes | None = None
) -> bytes:
    """The plan file: version 2 (compact; the default) or 1 (a whole record per change,
    indented unless `indent` is False), its wording sealed with `seal_key`."""
    if version == 1 and not indent and seal_key is None and not plan.decisions:
        return full_json(plan)
    data = plan.to_dict() if version == 1 else compact_plan(plan)
    if plan.decisions:
        data["decisions"] = {
            "approved": [i for i, yes in plan.decisions.items() if yes],
            "rejected": [i for i, yes in plan.decisions.items() if not yes],
        }
    if seal_key is not None:
        data["seals"] = seals_for(seal_key, plan)
    return dumps(data, indent=indent and version == 1)


def plan_json_parts(plan: Plan, version: int = 1) -> Iterator[bytes]:
    """`plan_bytes(plan, version, indent=False)` in pieces that are each whole UTF-8 text
    (version 1: one per action), so a big plan is printed without one copy of it all."""
    if version == 1:
        yield from full_json_parts(plan)
    else:
        yield dumps(compact_plan(plan))


def write_plan(plan: Plan, path: str, version: int = 2, seal_key: bytes | None = None) -> None:
    target = Path(path).expanduser()
    if target.exists() and not target.is_file():
        raise MemtuiError(f"{target}: is not a regular file; not writing the plan there")
    if target.exists():
        try:
            with open(target, "rb") as f:
                head = f.read(200)  # a plan file starts with its format
        except OSError:
            head = b""
        if not _PLAN_HEAD.match(head):
            raise MemtuiError(f"{target}: exists and is not a memtui plan; not overwriting it")
    try:
        atomic_write(target, plan_bytes(plan, version, seal_key=seal_key), mode=0o600)
    except FileNotFoundError:
        raise MemtuiError(
            f"{target}: its folder does not exist; the plan was not written"
        ) from None
    except OSError as e:
        raise MemtuiError(f"{target}: cannot write the plan there ({e.strerror})") from None


def plan_summary(plan: Plan) -> str:
    counts = ", ".join(f"{kind} {n}" for kind, n in plan.summary.items()) or "nothing to do"
    touched = len({t for a in plan.actions for t in a.targets})
    head = "".join(f"{line}\n" for line in plan.warnings)
    head += f"{plan.profile} plan for {plan.store}: {counts} ({entries(touched)} touched)"
    waiting = sum(a.needs_decision for a in plan.actions)
    if waiting:
        head += f"; {waiting} {'needs' if waiting == 1 else 'need'} a decision (marked ?)"
    if plan.health:
        head += "\nhealth: " + ", ".join(f"{k} {v}" for k, v in plan.health.items())
    return head


# -- by hand ----------------------------------------------------------------------------------


def _live_members(store: MemoryStore, ids: Sequence[str]) -> list[Memory]:
    if len(set(ids)) != len(ids):
        raise MemtuiError("the same entry is named twice")
    members = [store.get(i) for i in ids]
    for m in members:
        if m.status in RETIRED or m.status is Status.DELETED:
            raise MemtuiError(f"{m.id} is {m.status.value}; restore it before merging it")
    return members


def _merge_members(store: MemoryStore, ids: Sequence[str]) -> list[Memory]:
    """The entries named, in store order, as a plan's merge takes them (in every format: the
    merged entry's tags, paths and first member do not follow the order they were named in)."""
    named = {m.id: m for m in _live_members(store, ids)}
    return [m for m in store.memories() if named.pop(m.id, None) is not None] + [*named.values()]


def merge_rule(store: MemoryStore, strategy: str) -> str:
    if strategy == "keep-base":
        return "keep-base"
    if strategy != "rule":
        raise MemtuiError(f"unknown merge strategy {strategy!r} (use rule or keep-base)")
    return get_profile(profile_for_format(store.format_name)).merge_rule


def preview_merge(
    store: MemoryStore,
    ids: Sequence[str],
    *,
    strategy: str = "rule",
    content: str | None = None,
    now: datetime,
    taken: TakenIds | None = None,
    new_id: str | None = None,
) -> tuple[Memory, list[Memory]]:
    """The merged entry and the retired members, as a merge would write them (`taken`: the
    store's ids indexed before, so the new id costs O(1); `new_id`: the id a preview showed,
    kept when the store does not hold it)."""
    members = _merge_members(store, ids)
    if taken is None:
        taken = TakenIds.of(m.id for m in store.memories())
    if new_id is None or store.find(new_id) is not None:
        new_id = IdMaker(store.format_name, (), now, index=taken).new(
            "|".join(m.id for m in members)
        )
    rule = merge_rule(store, strategy)
    if rule == "memtui" and content is None:
        profile = get_profile(profile_for_format(store.format_name))
        content = rule_wording(members, profile.wording_max_chars).text
    return merge_entries(
        members,
        new_id=new_id,
        now=now,
        rule=rule,
        content=content,
    )


def merge_by_hand(
    store: MemoryStore,
    ids: Sequence[str],
    *,
    strategy: str = "rule",
    content: str | None = None,
    now: datetime,
    new_id: str | None = None,
    progress: CommitProgress | None = None,
) -> Transaction:
    members = _merge_members(store, ids)
    merged, retired = preview_merge(
        store, ids, strategy=strategy, content=content, now=now, new_id=new_id
    )
    how = "own text" if content is not None else strategy
    changes = [Change(None, merged), *(Change(m, r) for m, r in zip(members, retired, strict=True))]
    return store.commit(
        changes,
        actor=Actor.USER,
        kind="merge",
        now=now,
        reason=f"merged {entries(len(members))} by hand ({how})",
        details={"merged": merged.id},
        progress=progress,
    )


def supersede(
    store: MemoryStore, old_id: str, new_id: str, *, reason: str, now: datetime
) -> Transaction:
    if old_id == new_id:
        raise MemtuiError("an entry cannot supersede itself")
    old, new = _live_members(store, [old_id, new_id])
    if old.user_id != new.user_id:
        raise MemtuiError(f"{old_id} and {new_id} belong to different users")
    [retired] = retire([old], new.id, now, Status.SUPERSEDED)
    successor = new.with_(supersedes=(*new.supersedes, old.id), updated_at=now)
    return store.commit(
        [Change(old, retired), Change(new, successor)],
        actor=Actor.USER,
        kind="supersede",
        reason=reason or f"{new_id} replaces {old_id}",
        now=now,
    )


# -- records, lineage and restore -------------------------------------------------------------


@dataclass(slots=True)
class History:
    """Every image the ledger holds of each entry, oldest first."""

    images: dict[str, list[tuple[Transaction, ChangeImage]]] = field(default_factory=dict)

    @classmethod
    def of(cls, store: MemoryStore) -> History:
        history = cls()
        for tx in store.transactions():
            for change in tx.changes:
                history.images.setdefault(change.id, []).append((tx, change))
        return history

    def latest(self, ident: str) -> ChangeImage | None:
        images = self.images.get(ident)
        return images[-1][1] if images else None

    def created_by_merge(self, ident: str) -> bool | None:
        """True if a transaction created it, False if it existed before, None if unknown."""
        images = self.images.get(ident)
        if not images:
            return None
        first = images[0][1]
        return first.before is None


def record_of(store: MemoryStore, ident: str, history: History | None = None) -> Memory | None:
    """The entry as the store holds it, or as the ledger last saw it (pi stores drop merged
    and superseded entries from the file; their records live on in the ledger). Lineage fields
    the file cannot hold come from the ledger."""
    history = history or History.of(store)
    current = store.find(ident)
    image = history.latest(ident)
    remembered = image.after_memory() if image is not None else None
    if current is None:
        return remembered
    if remembered is not None and store.format_name == "pi":
        return current.with_(
            supersedes=remembered.supersedes,
            superseded_by=remembered.superseded_by,
            superseded_at=remembered.superseded_at,
        )
    return current


@dataclass(slots=True)
class Lineage:
    id: str
    supersedes: list[str]
    superseded_by: list[str]
    records: dict[str, Memory]
    events: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "events": self.events,
        }


def lineage(store: MemoryStore, ident: str) -> Lineage:
    """What the entry replaced and what replaced it, transitively, with the events."""
    history = History.of(store)
    start = record_of(store, ident, history)
    if start is None:
        raise NotFoundError(f"{store.path}: no memory with id {ident!r}, now or in the ledger")
    records = {ident: start}

    def get(i: str) -> Memory | None:
        if i not in records:
            found = record_of(store, i, history)
            if found is None:
                return None
            records[i] = found
        return records[i]

    older: list[str] = []
    stack = list(start.supersedes)
    while stack:
        current = stack.pop(0)
        if current in older or current == ident:
            continue
        older.append(current)
        record = get(current)
        if record is not None:
            stack.extend(record.supersedes)
    newer: list[str] = []
    successor = start.superseded_by
    while successor and successor not in newer and successor != ident:
        newer.append(successor)
        record = get(successor)
        successor = record.superseded_by if record is not None else None
    chain = {ident, *older, *newer}
    events: list[dict[str, Any]] = []
    for i in chain:
        record = records.get(i)
        # links the source system made itself (no ledger entry explains them)
        if i in history.images:
            continue
        if record is not None and record.superseded_by and record.superseded_at:
            reason = str(record.extra.get("supersede_reason", ""))
            events.append(
                {
                    "at": format_iso(record.superseded_at),
                    "tx": None,
                    "actor": "source",
                    "kind": record.status.value,
                    "reason": reason,
                    "memory_ids": [i, record.superseded_by],
                }
            )
    seen_tx: set[int] = set()
    for i in chain:
        for tx, _ in history.images.get(i, []):
            if tx.id not in seen_tx:
                seen_tx.add(tx.id)
                events.append(
                    {
                        "at": format_iso(tx.at),
                        "tx": tx.id,
                        "actor": tx.actor,
                        "kind": tx.kind,
                        "reason": tx.reason,
                        "memory_ids": [m for m in tx.memory_ids if m in chain],
                    }
                )
    events.sort(key=lambda e: e["at"])
    return Lineage(ident, older, newer, records, events)


def _record_back(
    store: MemoryStore, image: ChangeImage | None, back: Memory
) -> dict[str, Any] | None:
    """The record the file held before the entry left it, when it says what `back` says: the
    entry then comes back byte for byte (its key order included)."""
    raw = image.before_raw if image is not None and image.after_raw is None else None
    if raw is None or store.find(back.id) is not None:
        return None
    return raw if store.returns_as(raw, back) else None


def restore(store: MemoryStore, ident: str, *, now: datetime) -> Transaction:
    """Bring an entry back. A merge or absorption is undone as one unit: every member returns,
    a merged entry that the merge created is removed (status deleted, restorable in turn), and
    the lineage links are cut. A superseded entry returns and its successor forgets it."""
    history = History.of(store)
    entry = record_of(store, ident, history)
    if entry is None:
        raise NotFoundError(f"{store.path}: no memory with id {ident!r}, now or in the ledger")
    if entry.status is Status.ACTIVE:
        raise MemtuiError(f"{ident} is active; there is nothing to restore")
    changes: dict[str, Change] = {}

    def bring_back(member: Memory) -> None:
        before = store.find(member.id)
        image = history.latest(member.id)
        back = member.with_(
            status=Status.ACTIVE,
            superseded_by=None,
            superseded_at=None,
            updated_at=now,
            extra={k: v for k, v in member.extra.items() if k != "supersede_reason"},
        )
        position = image.position if image is not None and before is None else None
        changes[member.id] = Change(
            before if before is not None else member,
            back,
            _record_back(store, image, back),
            position,
        )

    successor_id = entry.superseded_by if entry.status in RETIRED else None
    if successor_id is None:
        bring_back(entry)
        reason = f"restored {ident} ({entry.status.value} → active)"
    else:
        successor = record_of(store, successor_id, history)
        members = [entry]
        if successor is not None:
            for other_id in successor.supersedes:
                other = record_of(store, other_id, history)
                if (
                    other is not None
                    and other.id != ident
                    and other.status in RETIRED
                    and other.superseded_by == successor_id
                ):
                    members.append(other)
        for member in members:
            bring_back(member)
        unit = entry.status is Status.MERGED and successor is not None
        created = history.created_by_merge(successor_id) if successor is not None else None
        current = store.find(successor_id)
        if successor is not None and successor.status is Status.ACTIVE:
            if unit and (
                created
                or (created is None and set(successor.supersedes) <= {m.id for m in members})
            ):
                after = successor.with_(status=Status.DELETED, updated_at=now)
                what = f"removed the merged entry {successor_id}"
            else:
                remaining = tuple(s for s in successor.supersedes if s not in changes)
                after = successor.with_(supersedes=remaining, updated_at=now)
                what = f"{successor_id} no longer supersedes {'them' if len(members) > 1 else 'it'}"
            changes[successor_id] = Change(current if current is not None else successor, after)
        elif current is not None:  # the successor is itself retired: it forgets them too
            remaining = tuple(s for s in current.supersedes if s not in changes)
            changes[successor_id] = Change(
                current, current.with_(supersedes=remaining, updated_at=now)
            )
            what = f"{successor_id} no longer supersedes {'them' if len(members) > 1 else 'it'}"
        else:
            what = "its successor is gone"
        names = ", ".join(m.id for m in members)
        reason = f"restored {names} from {successor_id}; {what}"
    return store.commit(
        list(changes.values()), actor=Actor.USER, kind="restore", reason=reason, now=now
    )
