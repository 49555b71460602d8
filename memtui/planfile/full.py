"""Plan files, version 1: a whole record before and after each action (`Plan.to_dict`),
written as one piece or action by action, and read back record by record."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memtui.engine.plan import Action, Plan, plan_record
from memtui.errors import MemtuiError
from memtui.jsonout import dumps
from memtui.model import Memory
from memtui.stores.formats.native import NativeFormat

_RECORDS = NativeFormat()
_PLAN_PATH = Path("plan")


def full_json(plan: Plan) -> bytes:
    """`dumps(plan.to_dict())` (compact), built action by action (`full_json_parts`)."""
    return b"".join(full_json_parts(plan))


def full_json_parts(plan: Plan) -> Iterator[bytes]:
    """`dumps(plan.to_dict())` (compact) in pieces, one per action: the records are never all
    held as dicts at once (nor as orjson's oversized buffers)."""
    whole = plan.file_fields([])
    after = list(whole)[list(whole).index("actions") + 1 :]
    head = dumps({k: v for k, v in whole.items() if k not in after})
    tail = dumps({k: whole[k] for k in after})
    yield head[: -len(b"[]}")] + b"["
    for n, action in enumerate(plan.actions):
        yield b"".join(
            [
                b"," if n else b"",
                dumps(action.head())[:-1],
                b',"before":[',
                b",".join([dumps(plan_record(m)) for m in action.before]),
                b'],"after":[',
                b",".join([dumps(plan_record(m)) for m in action.after]),
                b"],",
                dumps(action.tail())[1:],
            ]
        )
    yield b"]," + tail[1:]


def read_record(raw: Any) -> Memory:
    """A record as the native store checks it: types, statuses, times."""
    try:
        return _RECORDS.decode(raw, _PLAN_PATH)
    except MemtuiError as e:
        raise ValueError(str(e).removeprefix("plan: ")) from None


def action_from_dict(raw: dict[str, Any]) -> Action:
    """An action of a version-1 file, with its records."""
    return action_with(
        raw, [read_record(m) for m in raw["before"]], [read_record(m) for m in raw["after"]]
    )


def action_with(raw: dict[str, Any], before: list[Memory], after: list[Memory]) -> Action:
    """The action a file's `raw` fields describe, holding `before` and `after`; raises
    ValueError (or KeyError, TypeError) naming what is damaged."""
    targets = raw["targets"]
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise ValueError("targets must be a list of ids")
    scores = raw.get("scores") or {}
    if not isinstance(scores, dict):
        raise ValueError("scores must be an object")
    return Action(
        id=str(raw["id"]),
        kind=str(raw["kind"]),
        targets=targets,
        before=before,
        after=after,
        rule=str(raw.get("rule", "")),
        scores={str(k): float(v) for k, v in scores.items()},
        reason=str(raw.get("reason", "")),
        depends_on=[str(d) for d in raw.get("depends_on") or []],
        needs_decision=bool(raw.get("needs_decision", False)),
        actor=str(raw.get("actor", "plan")),
        details=dict(raw.get("details") or {}),
    )
