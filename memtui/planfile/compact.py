"""Plan files, version 2: each action records only the fields it changes (before and after
values) and a fingerprint of each entry it was planned from; the decays of one rule, and the
expiries (or archivings) of one rule, share one bulk record with a row per entry. The full
entries come from the store the plan is loaded against (`expand`), which refuses a plan whose
entries changed since.

In memory a plan keeps one action per entry with full records (`Plan.actions`), so review,
per-entry approval and `plan_changes` work the same for plans made and plans loaded.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from typing import Any, NamedTuple

import orjson

from memtui.engine.kinds import ACTION_KINDS, kind_of
from memtui.engine.plan import AS_JSON, Action, Plan, field_changes, plan_record
from memtui.engine.plan_compact import decay_reason, expiry_reason
from memtui.engine.wholesale import unheld
from memtui.jsonout import dumps_text, literal
from memtui.model import Memory, same_except
from memtui.planfile.absorb_rows import (
    ABSORB_COLUMNS,
    AbsorbRow,
    Recipe,
    absorb_row,
    absorbed,
    read_recipe,
    read_row,
    recipes,
    recomputing,
    result_fingerprint,
)
from memtui.planfile.full import action_with, read_record
from memtui.times import days_between

COMPACT_VERSION = 2
DECAY_COLUMNS = ["action", "entry", "fingerprint", "days", "from", "to"]
EXPIRY_COLUMNS = ["action", "entry", "fingerprint", "after", "age_days", "importance"]
"""`after`: the action it depends on (the last one before it on the entry), or null; the
fingerprint is then empty (the entry is as that action leaves it)."""
BULK_COLUMNS = {"decay": DECAY_COLUMNS, "expiry": EXPIRY_COLUMNS, "absorb": ABSORB_COLUMNS}
COLUMNS = {k.name: BULK_COLUMNS[k.bulk] for k in ACTION_KINDS.values() if k.bulk is not None}
"""Each kind a bulk record can hold: the columns of its rows."""


_DECAYED = frozenset({"importance", "last_decayed_at"})
_EXPIRED = frozenset({"status", "updated_at"})


def fingerprint(memory: Memory) -> str:
    """A short hash of every field of the entry (what a plan was made from)."""
    try:
        data = orjson.dumps(memory, literal, option=orjson.OPT_SERIALIZE_NUMPY)
    except (orjson.JSONEncodeError, TypeError):  # values orjson refuses (ints past 64 bits)
        data = dumps_text(memory.to_dict()).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=8).hexdigest()


def _memo_fingerprint(known: Mapping[int, str] | None = None) -> Callable[[Memory], str]:
    """`known`: fingerprints by identity of records that outlive the writer (the store's)."""
    seen: dict[int, tuple[Memory, str]] = {}

    def fp(memory: Memory) -> str:
        if known is not None and (found := known.get(id(memory))) is not None:
            return found
        hit = seen.get(id(memory))
        if hit is None:
            hit = seen[id(memory)] = (memory, fingerprint(memory))
        return hit[1]

    return fp


def _expire_below(params: Mapping[str, Any]) -> float | None:
    below = params.get("expire_below")
    if not isinstance(below, int | float) or isinstance(below, bool):
        return None
    return float(below)


def _decay_params(params: Mapping[str, Any]) -> tuple[float, float | None] | None:
    rate, line = params.get("decay_rate"), params.get("archive_line")
    if not isinstance(rate, int | float) or isinstance(rate, bool):
        return None
    if line is not None and (not isinstance(line, int | float) or isinstance(line, bool)):
        return None
    return float(rate), None if line is None else float(line)


# -- writing ----------------------------------------------------------------------------------


def compact_plan(plan: Plan) -> dict[str, Any]:
    """The plan as a version-2 file holds it."""
    records = CompactRecords(plan)
    actions = [record for action in plan.actions for record in records.feed(action)]
    return plan.file_fields([*actions, *records.close()], COMPACT_VERSION)


_NO_USER = object()


class CompactRecords:
    """A version-2 file's action records, action by action: `feed` returns the records it
    completes (a bulk record is complete when a record of another kind or rule follows)."""

    def __init__(
        self,
        plan: Plan,
        by_user: bool = False,
        prints: Mapping[int, str] | None = None,
        hints: Callable[[Action], Any] | None = None,
    ) -> None:
        """`plan`: the plan's time and params (its actions are fed). `by_user`: the actions
        come user after user and no action touches two users' entries, so what is held of
        one user's entries is let go when the next user's actions start (a streamed plan
        stays within one user's records). `prints`: fingerprints already made, by the
        identity of records alive meanwhile. `hints`: an action's `RowHints` made where it
        was planned, or None (then found here)."""
        self.plan = plan
        self.by_user = by_user
        self.user: object = _NO_USER
        self.prints = prints
        self.hints = hints
        self.fp = _memo_fingerprint(prints)
        self.params = _decay_params(plan.params)
        self.below = _expire_below(plan.params)
        self.tried = recipes(plan.params)
        self.reasons: dict[str, int] = {}  # the absorb rows' reasons, numbered across the file
        self.touched: dict[str, str] = {}  # entry → the last action that targets it
        self.position: dict[str, int] = {}
        self.last_after: dict[str, Memory] = {}  # entry → as the last action leaves it
        # the open bulk record: consecutive rows of one kind and rule (and absorb recipe)
        # share it, so that the file keeps the plan's order of actions
        self.open_bulk: dict[tuple[str, str, Recipe | None], dict[str, Any]] = {}

    def _next_user(self, action: Action) -> None:
        user = (action.before or action.after)[0].user_id
        if user != self.user:
            self.user = user
            self.fp = _memo_fingerprint(self.prints)
            self.touched, self.position, self.last_after = {}, {}, {}

    def feed(self, action: Action) -> list[dict[str, Any]]:
        if self.by_user:
            self._next_user(action)
        plan, fp, open_bulk = self.plan, self.fp, self.open_bulk
        self.position[action.id] = len(self.position)
        recipe: Recipe | None = None
        bulk = kind_of(action.kind).bulk
        hint = None if self.hints is None or bulk is None else self.hints(action)
        if bulk == "decay":
            if hint is None:
                row = _decay_row(unheld(action), plan.now, self.params, fp)
            else:
                row = _plain_decay_row(action, fp) if hint else None
        elif bulk == "expiry":
            row = _expiry_row(unheld(action), plan, self.below, fp)
        elif bulk == "absorb":
            deps = preceding(action.targets, self.touched, self.position)
            first = [r for _, rule, r in open_bulk if r is not None and rule == action.rule]
            made = absorb_row(
                action, plan.now, [*first, *self.tried], fp, self.last_after, deps, hint
            )
            row, recipe = made if made is not None else (None, None)
        else:
            row = None
        for ident in action.targets:
            self.touched[ident] = action.id
        for memory in action.after:
            self.last_after[memory.id] = memory
        if row is None:
            return [*self.close(), _compact_action(action, fp)]
        held = open_bulk.get((action.kind, action.rule, recipe))
        done = []
        if held is None:
            done = self.close()
            held = open_bulk[action.kind, action.rule, recipe] = _bulk_record(action, recipe)
        if recipe is not None:
            index = self.reasons.get(action.reason)
            if index is None:
                index = self.reasons[action.reason] = len(self.reasons)
                held["reasons"].append(action.reason)
            row[6] = index
        held["rows"].append(row)
        return done

    def close(self) -> list[dict[str, Any]]:
        """The open bulk record, now complete."""
        done = list(self.open_bulk.values())
        self.open_bulk.clear()
        return done


def _bulk_record(action: Action, recipe: Recipe | None) -> dict[str, Any]:
    record: dict[str, Any] = {
        "kind": action.kind,
        "bulk": True,
        "actor": "plan",
        "rule": action.rule,
        "columns": COLUMNS[action.kind],
    }
    if recipe is not None:
        record["recipe"] = recipe.as_json()
        record["reasons"] = []
    record["rows"] = []
    return record


def preceding(
    targets: list[str], touched: Mapping[str, str], position: Mapping[str, int]
) -> list[str]:
    """The last actions before this one on its targets, in plan order (its `depends_on`)."""
    found = {touched[t] for t in targets if t in touched}
    return sorted(found, key=position.__getitem__)


class RowHints:
    """What an action's bulk row needs that the action alone decides, found where the action
    is planned (a worker: service/plan_spool.py) rather than by the file's writer: whether a
    decay is a plain one (True/False), which recipes recompute an absorb (a tuple), else
    None. `params`: the plan's (`Profile.to_dict()`)."""

    def __init__(self, now: datetime, params: Mapping[str, Any]) -> None:
        self.now = now
        self.params = _decay_params(params)
        self.tried = recipes(params)

    def __call__(self, action: Action) -> Any:
        bulk = kind_of(action.kind).bulk
        if bulk == "decay":
            return _decay_row(unheld(action), self.now, self.params, _no_print) is not None
        if bulk == "absorb":
            return recomputing(action, self.tried, self.now)
        return None


def _no_print(memory: Memory) -> str:
    return ""


def _plain_decay_row(action: Action, fp: Callable[[Memory], str]) -> list[Any]:
    """The row of a decay its hint found plain."""
    [was], [now] = action.before, action.after
    return [action.id, was.id, fp(was), action.scores["days"], was.importance, now.importance]


def _decay_row(
    action: Action,
    plan_now: datetime,
    params: tuple[float, float | None] | None,
    fp: Callable[[Memory], str],
) -> list[Any] | None:
    """The action as a row of its rule's bulk record, or None when it is not a plain decay."""
    if (
        params is None
        or action.depends_on
        or action.needs_decision
        or action.actor != "plan"
        or action.details
        or len(action.before) != 1
        or len(action.after) != 1
        or set(action.scores) != {"days", "from", "to"}
    ):
        return None
    [was], [now] = action.before, action.after
    days, start, end = action.scores["days"], was.importance, now.importance
    if (
        now.id != was.id
        or action.targets != [was.id]
        or action.scores != _decay_scores(days, start, end)
        or now.last_decayed_at != plan_now
        or not same_except(now, was, _DECAYED)
        or action.reason != decay_reason(days, start, end, *params)
    ):
        return None
    return [action.id, was.id, fp(was), days, start, end]


def _decay_scores(days: float, start: float, end: float) -> dict[str, float]:
    return {"days": days, "from": round(start, 6), "to": round(end, 6)}


def _expiry_row(
    action: Action, plan: Plan, below: float | None, fp: Callable[[Memory], str]
) -> list[Any] | None:
    """The action as a row of its rule's bulk record, or None when it is not a plain expiry
    (or archiving) that needs no decision."""
    if (
        below is None
        or action.needs_decision
        or action.actor != "plan"
        or action.details
        or len(action.depends_on) > 1
        or len(action.before) != 1
        or len(action.after) != 1
        or set(action.scores) != {"age_days", "importance"}
    ):
        return None
    [was], [now] = action.before, action.after
    age = action.scores["age_days"]
    if (
        was.created_at is None
        or action.targets != [was.id]
        or action.scores != _expiry_scores(was, plan)
        or now.status is not kind_of(action.kind).bulk_status
        or now.updated_at != plan.now
        or not same_except(now, was, _EXPIRED)
        or action.reason != expiry_reason(action.kind, age, action.scores["importance"], below)
    ):
        return None
    if action.depends_on:  # the entry is as the action it follows leaves it
        return [action.id, was.id, "", action.depends_on[0], age, action.scores["importance"]]
    return [action.id, was.id, fp(was), None, age, action.scores["importance"]]


def _expiry_scores(was: Memory, plan: Plan) -> dict[str, float] | None:
    if was.created_at is None:
        return None
    age = days_between(was.created_at, plan.now)
    return {"age_days": round(age, 6), "importance": round(was.importance, 6)}


def _compact_action(action: Action, fp: Callable[[Memory], str]) -> dict[str, Any]:
    found = {m.id: m for m in action.before}
    after: list[Any] = []
    changes: dict[str, dict[str, list[Any]]] = {}
    for memory in action.after:
        was = found.get(memory.id)
        if was is None:
            after.append(plan_record(memory))
            continue
        after.append(memory.id)
        if memory is not was:
            diff = field_changes(was, memory)
            if diff:
                changes[memory.id] = diff
    out: dict[str, Any] = {
        "id": action.id,
        "kind": action.kind,
        "targets": action.targets,
        "found": [[m.id, fp(m)] for m in action.before],
        "after": after,
        "changes": changes,
        "rule": action.rule,
        "scores": action.scores,
        "reason": action.reason,
        "depends_on": action.depends_on,
        "actor": action.actor,
    }
    if action.needs_decision:
        out["needs_decision"] = True
    if action.details:
        out["details"] = action.details
    return out


# -- reading ----------------------------------------------------------------------------------


def actions_from_compact(
    raws: list[Any], plan_params: dict[str, Any]
) -> tuple[list[Action], dict[str, Any]]:
    """The actions of a version-2 file without their records (`expand` fills them from the
    store), and each action's compact record by id. Raises ValueError naming the problem."""
    actions: list[Action] = []
    pending: dict[str, Any] = {}
    for action, raw in compact_actions(raws, plan_params):
        actions.append(action)
        pending[action.id] = raw
    return actions, pending


def compact_actions(
    raws: list[Any], plan_params: dict[str, Any], *, drop: bool = False
) -> Iterator[tuple[Action, Any]]:
    """`actions_from_compact`'s actions with their compact records, in file order (`drop`:
    each record let go of in `raws` once its actions are made)."""
    rate = plan_params.get("decay_rate")
    line = plan_params.get("archive_line")
    below = _expire_below(plan_params)
    absorb_reasons: list[str] = []  # numbered across the file's absorb records
    for n, raw in enumerate(raws):
        if drop:
            raws[n] = None
        if not isinstance(raw, dict):
            raise ValueError(f"action {n} is not an object")
        if raw.get("bulk") is True:
            kind = raw.get("kind")
            if kind not in COLUMNS or raw.get("columns") != COLUMNS[kind]:
                raise ValueError(f"action {n}: a bulk record holds decay, expiry or absorb rows")
            rows = raw.get("rows")
            if not isinstance(rows, list):
                raise ValueError(f"action {n}: its rows are not a list")
            rule = str(raw.get("rule", ""))
            bulk = kind_of(kind).bulk
            if bulk == "absorb":
                try:
                    made_rows = _absorb_row_actions(raw, rows, rule, absorb_reasons)
                except ValueError as e:
                    raise ValueError(f"action {n}: {e}") from None
                yield from made_rows
                continue
            if bulk == "decay":
                if not isinstance(rate, int | float) or isinstance(rate, bool):
                    raise ValueError("decay rows need the plan's numeric 'decay_rate' parameter")
                if line is not None and (
                    not isinstance(line, int | float) or isinstance(line, bool)
                ):
                    raise ValueError("the plan's 'archive_line' parameter is not a number")
                made = [_row_action(row, rule, float(rate), line) for row in rows]
            else:
                if below is None:
                    raise ValueError("expiry rows need the plan's numeric 'expire_below' parameter")
                made = [_expiry_row_action(row, kind, rule, below) for row in rows]
            yield from zip(made, rows, strict=True)
            continue
        yield _compact_action_from_dict(raw), raw


def _row_action(row: Any, rule: str, rate: float, line: float | None) -> Action:
    if (
        not isinstance(row, list)
        or len(row) != len(DECAY_COLUMNS)
        or not all(isinstance(v, str) for v in row[:3])
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in row[3:])
    ):
        raise ValueError(f"a decay row is damaged: {str(row)[:80]}")
    ident, entry, _, days, start, end = row
    return Action(
        id=ident,
        kind="decay",
        targets=[entry],
        before=[],
        after=[],
        rule=rule,
        scores=_decay_scores(float(days), float(start), float(end)),
        reason=decay_reason(days, start, end, rate, line),
    )


def _absorb_row_actions(
    raw: dict[str, Any],
    rows: list[Any],
    rule: str,
    reasons: list[str],
) -> list[tuple[Action, AbsorbRow]]:
    recipe = read_recipe(raw.get("recipe"))
    more = raw.get("reasons")
    if not isinstance(more, list) or not all(isinstance(r, str) for r in more):
        raise ValueError("an absorb record's reasons are not a list of text")
    reasons.extend(more)
    out = []
    for row in rows:
        ident, deps, scores, reason = read_row(row, reasons)
        action = Action(
            id=ident,
            kind="absorb",
            targets=list(row[1]),
            before=[],
            after=[],
            rule=rule,
            scores=scores,
            reason=reason,
            depends_on=list(deps),
        )
        out.append((action, AbsorbRow(row[1], row[2], row[3], recipe, row[7])))
    return out


def _expiry_row_action(row: Any, kind: str, rule: str, below: float) -> Action:
    if (
        not isinstance(row, list)
        or len(row) != len(EXPIRY_COLUMNS)
        or not all(isinstance(v, str) for v in row[:3])
        or not (row[3] is None or isinstance(row[3], str))
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in row[4:])
    ):
        raise ValueError(f"an expiry row is damaged: {str(row)[:80]}")
    ident, entry, _, after, age, importance = row
    return Action(
        id=ident,
        kind=kind,
        targets=[entry],
        before=[],
        after=[],
        rule=rule,
        scores={"age_days": float(age), "importance": float(importance)},
        reason=expiry_reason(kind, age, importance, below),
        depends_on=[] if after is None else [after],
    )


def _compact_action_from_dict(raw: dict[str, Any]) -> Action:
    found = raw["found"]
    if not isinstance(found, list) or not all(
        isinstance(f, list) and len(f) == 2 and all(isinstance(x, str) for x in f) for f in found
    ):
        raise ValueError("found must be a list of [id, fingerprint]")
    after = raw["after"]
    if not isinstance(after, list) or not all(isinstance(a, str | dict) for a in after):
        raise ValueError("after must list ids and new records")
    changes = raw.get("changes") or {}
    if not isinstance(changes, dict) or not all(
        isinstance(c, dict) and all(isinstance(v, list) and len(v) == 2 for v in c.values())
        for c in changes.values()
    ):
        raise ValueError("changes must map ids to {field: [before, after]}")
    return action_with(raw, [], [])


class PlanMismatch(ValueError):
    """An action of a plan file that the entries cannot explain (the action is named)."""

    def __init__(self, action: Action, problem: str) -> None:
        super().__init__(f"plan action {action.id} ({action.kind}) {problem}")
        self.action = action


class Expanded(NamedTuple):
    stale: list[str]
    """The entries that changed since the plan was made (then nothing is filled)."""
    recomputed: frozenset[str]
    """The actions read from bulk rows: each leaves its entry as its kind does (a decay
    changes only importance and `last_decayed_at`, an expiry only status and `updated_at`)."""


def expand(plan: Plan, pending: Mapping[str, Any], memories: Mapping[str, Memory]) -> Expanded:
    """Fill the actions of a plan read from a version-2 file (each one's compact record in
    `pending`) with full records from `memories` (the store as it is); raises PlanMismatch
    for an action the entries cannot explain."""
    fp = _memo_fingerprint()
    versions: dict[str, list[Memory]] = {}  # each entry as the store and earlier actions hold it
    stale: list[str] = []
    filled: list[tuple[Action, list[Memory], list[Memory]]] = []
    touched: dict[str, str] = {}  # entry → the last action that targets it
    position: dict[str, int] = {}
    tainted: set[str] = set()  # entries that actions skipped for stale entries would change
    planned_recipes = recipes(plan.params)
    for n, action in enumerate(plan.actions):
        position[action.id] = n
        raw = pending[action.id]
        if isinstance(raw, list):
            last = touched.get(raw[1])
            if action.depends_on != ([] if last is None else [last]):
                raise PlanMismatch(action, f"does not follow the action before it on {raw[1]!r}")
        elif isinstance(raw, AbsorbRow):
            if action.depends_on != preceding(action.targets, touched, position):
                raise PlanMismatch(action, "does not follow the actions before it on its entries")
            if raw.recipe not in planned_recipes:
                raise PlanMismatch(action, "uses a boost or caps that the plan's profile does not")
        for ident in action.targets:
            touched[ident] = action.id
        if not tainted.isdisjoint(action.targets):  # after an action whose entries changed
            tainted.update(action.targets)
            continue
        tainted.update(action.targets)  # until the action is filled in
        if isinstance(raw, list):
            was = _found(action, raw[1], raw[2], memories, versions, fp, stale)
            if was is None:
                continue
            befores = [was]
            afters = [_row_after(action, raw, was, plan)]
        elif isinstance(raw, AbsorbRow):
            found = [
                _found(action, ident, want, memories, versions, fp, stale)
                for ident, want in zip(raw.entries, raw.fingerprints, strict=True)
            ]
            befores = [m for m in found if m is not None]
            if len(befores) != len(found):
                continue
            afters = absorbed(befores, raw.keeper, raw.recipe, plan.now)
            if result_fingerprint(raw.entries, afters, fp) != raw.result:
                raise PlanMismatch(action, "recomputes to other records than it was planned with")
        else:
            befores, afters = _expand_action(action, raw, memories, versions, fp, stale)
            if not befores and raw["found"]:
                continue
        tainted.difference_update(action.targets)
        filled.append((action, befores, afters))
        for memory in afters:
            versions.setdefault(memory.id, []).append(memory)
    if stale:
        return Expanded(list(dict.fromkeys(stale)), frozenset())
    for action, befores, afters in filled:
        action.before, action.after = befores, afters
    return Expanded([], frozenset(i for i, raw in pending.items() if isinstance(raw, list)))


def _row_after(action: Action, row: list[Any], was: Memory, plan: Plan) -> Memory:
    """The entry as a bulk row's action leaves it, recomputed from the entry it finds."""
    ident = was.id
    kind = kind_of(action.kind)
    if kind.decays:
        if row[4] != was.importance:
            raise PlanMismatch(action, f"records an importance of {ident!r} it does not have")
        importance = float(row[5])
        if not 0.0 <= importance <= 1.0:
            raise PlanMismatch(action, f"gives {ident!r} the importance {importance:g}")
        return was.with_(importance=importance, last_decayed_at=plan.now)
    if action.scores != _expiry_scores(was, plan):
        raise PlanMismatch(action, f"records an age or importance of {ident!r} it does not have")
    return was.with_(status=kind.bulk_status, updated_at=plan.now)


def _found(
    action: Action,
    ident: str,
    want: str,
    memories: Mapping[str, Memory],
    versions: dict[str, list[Memory]],
    fp: Callable[[Memory], str],
    stale: list[str],
) -> Memory | None:
    """The entry as the action was planned from it: the store's (first touch) or as an
    earlier action leaves it. None (and `ident` in `stale`) when the store's changed since."""
    earlier = versions.get(ident)
    if not want:  # a bulk row after another action: the entry as that action leaves it
        if earlier and action.depends_on:
            return earlier[-1]
        if stale:
            return None
        raise PlanMismatch(action, f"finds {ident!r} as no earlier action leaves it")
    current = memories.get(ident)
    if not earlier:
        if current is None:
            if stale:  # made by an action whose entries changed
                return None
            raise PlanMismatch(action, f"targets {ident!r}, which the store does not hold")
        if fp(current) != want:
            stale.append(ident)
            return None
        versions[ident] = [current]
        return current
    for memory in reversed(earlier):
        if fp(memory) == want:
            return memory
    if ident in stale:
        return None
    raise PlanMismatch(action, f"finds {ident!r} as no earlier action leaves it")


def _expand_action(
    action: Action,
    raw: dict[str, Any],
    memories: Mapping[str, Memory],
    versions: dict[str, list[Memory]],
    fp: Callable[[Memory], str],
    stale: list[str],
) -> tuple[list[Memory], list[Memory]]:
    befores: list[Memory] = []
    for ident, want in raw["found"]:
        was = _found(action, ident, want, memories, versions, fp, stale)
        if was is None:
            return [], []
        befores.append(was)
    found = {m.id: m for m in befores}
    changes: dict[str, dict[str, list[Any]]] = raw.get("changes") or {}
    for ident in changes:
        if ident not in found:
            raise PlanMismatch(action, f"changes {ident!r}, an entry it does not find")
    afters: list[Memory] = []
    for item in raw["after"]:
        if isinstance(item, dict):
            try:
                afters.append(read_record(item))
            except ValueError as e:
                raise PlanMismatch(action, f"creates a damaged record ({e})") from None
            continue
        was = found.get(item)
        if was is None:
            raise PlanMismatch(action, f"leaves {item!r} without finding it")
        diff = changes.get(item)
        afters.append(_changed(action, was, diff) if diff else was)
    return befores, afters


def _changed(action: Action, was: Memory, diff: dict[str, list[Any]]) -> Memory:
    for name, (old, _) in diff.items():
        if name not in AS_JSON or name == "id":
            raise PlanMismatch(action, f"changes {name!r} of {was.id!r}, not a field it can")
        if AS_JSON[name](getattr(was, name)) != old:
            raise PlanMismatch(action, f"records a {name} of {was.id!r} the entry does not have")
    return was.with_(**_read_changes(action, was.id, diff))


_SEEN_CHANGES: dict[bytes, dict[str, Any]] = {}


def _read_changes(action: Action, ident: str, diff: dict[str, list[Any]]) -> dict[str, Any]:
    """The new values of `diff`, checked and read as the native store reads a record (the same
    change recurs: every expiry sets the same status and time, so each is read once)."""
    key = None
    if "extra" not in diff:  # a dict: each entry gets its own
        try:
            key = orjson.dumps(diff, literal)
        except (orjson.JSONEncodeError, TypeError):
            key = None
        seen = _SEEN_CHANGES.get(key) if key is not None else None
        if seen is not None:
            return seen
    partial = {"id": "plan", "content": ""}
    partial.update({name: new for name, (_, new) in diff.items()})
    try:
        read_record(partial)
        read = Memory.from_dict(partial)
    except (ValueError, TypeError) as e:
        raise PlanMismatch(action, f"gives {ident!r} a damaged value ({e})") from None
    values = {name: getattr(read, name) for name in diff}
    if key is not None:
        if len(_SEEN_CHANGES) > 4096:
            _SEEN_CHANGES.clear()
        _SEEN_CHANGES[key] = values
    return values
