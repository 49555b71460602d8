"""Absorptions as rows of a bulk record in version-2 plan files. An absorption is determined by
the entries it finds, which of them keeps its wording, the recipe (boost and caps) and the plan's
`now`: a row records those and a fingerprint of the result, never the changes, which are
recomputed on read with `merging.absorb_entries`, the function the planner used."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple, TypeGuard

from memtui.engine.merging import absorb_entries
from memtui.engine.plan import Action
from memtui.model import Memory

ABSORB_COLUMNS = [
    "action",
    "entries",
    "fingerprints",
    "keeper",
    "depends_on",
    "scores",
    "reason",
    "result",
]
"""`fingerprints[i]` is empty when `entries[i]` is as the last action before it on that entry
leaves it; `keeper` is the position in `entries` of the entry that keeps its wording; `reason`
an index into the reasons the file's absorb records list, in order; `result` a fingerprint of
the entries in their order and as the action leaves them."""
UNCAPPED = 10**6


class Recipe(NamedTuple):
    """What `absorb_entries` is given besides the entries and `now`."""

    boost: float
    max_paths: int
    max_tags: int

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


class AbsorbRow(NamedTuple):
    """An absorb row as read, until `expand` fills its action from the store."""

    entries: list[str]
    fingerprints: list[str]
    keeper: int
    recipe: Recipe
    result: str


def absorbed(before: Sequence[Memory], keeper: int, recipe: Recipe, now: datetime) -> list[Memory]:
    """The keeper having taken in the other entries, then the others, retired into it."""
    others = [m for n, m in enumerate(before) if n != keeper]
    kept, retired = absorb_entries(
        before[keeper],
        others,
        now=now,
        boost=recipe.boost,
        max_paths=recipe.max_paths,
        max_tags=recipe.max_tags,
    )
    return [kept, *retired]


def result_fingerprint(
    entries: Sequence[str], after: Sequence[Memory], fp: Callable[[Memory], str]
) -> str:
    """Of the entries in the order the action finds them and of each as it leaves it."""
    text = "\n".join([*entries, *(fp(m) for m in after)])
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def recipes(params: Mapping[str, Any]) -> list[Recipe]:
    """The recipes the planner's absorptions use under these profile parameters."""
    boost = params.get("absorb_boost")
    paths, tags = params.get("max_paths"), params.get("max_tags")
    boosts = [0.0]
    if _number(boost) and boost:
        boosts.append(float(boost))
    caps = [(UNCAPPED, UNCAPPED)]
    if _integer(paths) and _integer(tags):
        caps.append((paths, tags))
    return [Recipe(b, p, t) for b in boosts for p, t in caps]


def _number(value: Any) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def absorb_row(
    action: Action,
    plan_now: datetime,
    tried: Sequence[Recipe],
    fp: Callable[[Memory], str],
    last_after: Mapping[str, Memory],
    depends_on: list[str],
    recomputes: Sequence[Recipe] | None = None,
) -> tuple[list[Any], Recipe] | None:
    """The action as an absorb row (its reason left for the caller) and the recipe that
    recomputes it exactly, or None when no recipe does (the action keeps a record of its own).
    `recomputes`: the recipes that do, when known (`recomputing`), else tried here."""
    before, after = action.before, action.after
    ids = [m.id for m in before]
    if (
        action.kind != "absorb"
        or action.needs_decision
        or action.actor != "plan"
        or action.details
        or len(before) < 2
        or action.targets != ids
        or len(after) != len(before)
        or action.depends_on != depends_on
        or not all(_number(v) for v in action.scores.values())
    ):
        return None
    keeper = next((n for n, m in enumerate(before) if m.id == after[0].id), None)
    if keeper is None:
        return None
    for recipe in tried:
        if (
            recipe in recomputes
            if recomputes is not None
            else absorbed(before, keeper, recipe, plan_now) == after
        ):
            prints = ["" if last_after.get(m.id) is m else fp(m) for m in before]
            row = [
                action.id,
                ids,
                prints,
                keeper,
                action.depends_on,
                action.scores,
                None,
                result_fingerprint(ids, after, fp),
            ]
            return row, recipe
    return None


def recomputing(action: Action, tried: Sequence[Recipe], now: datetime) -> tuple[Recipe, ...]:
    """Those of `tried` that recompute the absorb action's records exactly (where
    `absorb_row` would try them)."""
    before, after = action.before, action.after
    if len(before) < 2 or len(after) != len(before):
        return ()
    keeper = next((n for n, m in enumerate(before) if m.id == after[0].id), None)
    if keeper is None:
        return ()
    return tuple(r for r in tried if absorbed(before, keeper, r, now) == after)


def read_recipe(raw: Any) -> Recipe:
    if not isinstance(raw, dict):
        raise ValueError("an absorb record's recipe is not an object")
    boost, paths, tags = raw.get("boost"), raw.get("max_paths"), raw.get("max_tags")
    if not _number(boost) or not _integer(paths) or not _integer(tags):
        raise ValueError("an absorb record's recipe needs a numeric boost and integer caps")
    return Recipe(float(boost), int(paths), int(tags))


def read_row(row: Any, reasons: Sequence[str]) -> tuple[str, list[str], dict[str, float], str]:
    """The row's action id, depends_on, scores and reason; raises ValueError when damaged."""
    if not isinstance(row, list) or len(row) != len(ABSORB_COLUMNS):
        raise ValueError(f"an absorb row is damaged: {str(row)[:80]}")
    ident, entries, prints, keeper, deps, scores, reason, result = row
    if (
        not isinstance(ident, str)
        or not _strings(entries)
        or not _strings(prints)
        or len(entries) < 2
        or len(prints) != len(entries)
        or len(set(entries)) != len(entries)
        or not _integer(keeper)
        or not 0 <= keeper < len(entries)
        or not _strings(deps)
        or not isinstance(scores, dict)
        or not all(isinstance(k, str) and _number(v) for k, v in scores.items())
        or not _integer(reason)
        or not 0 <= reason < len(reasons)
        or not isinstance(result, str)
    ):
        raise ValueError(f"an absorb row is damaged: {str(row)[:80]}")
    return ident, deps, {k: float(v) for k, v in scores.items()}, reasons[reason]


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
