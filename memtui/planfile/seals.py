"""Seals on plan files: memtui signs the wording of every action it writes to a plan file
(merged or rewritten content, which apply cannot recompute from the entries, and which member
an absorb keeps), with a key kept in its data folder. A plan read back is checked against them:
wording changed in the file is refused, naming the action; wording without a seal from this
memtui (an older file, another machine, a hand-written plan) waits for a person's decision
instead of being applied."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from pathlib import Path

import orjson

from memtui.engine.kinds import kind_of
from memtui.engine.plan import Action, Plan
from memtui.errors import MemtuiError
from memtui.model import Status
from memtui.times import format_iso

KEY_FILE = "plan-seal.key"
_KEY_BYTES = 32
Seals = tuple[str, dict[str, str]]
"""What a plan file's "seals" hold: the id of the key that sealed its wording and each worded
action's seal ("", {}: none)."""


def load_key(folder: Path) -> bytes | None:
    """This memtui's sealing key, made on first use (readable by the user only); None when the
    data folder cannot hold one (plans are then written and read unsealed)."""
    path = folder / KEY_FILE
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            if not _make_key(path):
                return None
            continue
        except OSError:
            return None
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            key = f.read(_KEY_BYTES + 1)
        return key if len(key) == _KEY_BYTES else None
    return None


def _make_key(path: Path) -> bool:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return True  # another process made it first
    except OSError:
        return False
    with os.fdopen(fd, "wb") as f:
        f.write(os.urandom(_KEY_BYTES))
    return True


def key_id(key: bytes) -> str:
    """Names the key in a plan file without revealing it."""
    return hashlib.sha256(b"memtui plan seal key\0" + key).hexdigest()[:16]


def worded(action: Action) -> list[list[str]]:
    """The records whose content the action writes: entries it creates or rewrites, and the
    entry an absorb keeps (which member's wording survives is the absorb's choice)."""
    kept = kind_of(action.kind).seals_kept
    before, after = action.before, action.after
    if not kept and len(before) == len(after) == 1:  # a decay, an expiry: one entry each
        (b,), (a,) = before, after
        return [] if a.id == b.id and a.content == b.content else [[a.id, a.content]]
    was = {m.id: m.content for m in before}
    out = [[m.id, m.content] for m in after if was.get(m.id) != m.content]
    if kept:
        out += [[m.id, m.content] for m in action.after if m.status is Status.ACTIVE]
    return out


def seal(key: bytes, plan: Plan, action: Action, words: list[list[str]] | None = None) -> str:
    """`words`: the action's `worded`, when known."""
    sealed = [
        plan.store_fingerprint,
        format_iso(plan.now),
        action.id,
        action.kind,
        action.targets,
        worded(action) if words is None else words,
    ]
    try:
        message = orjson.dumps(sealed)
    except orjson.JSONEncodeError:  # a lone surrogate (pi cuts text at 500 UTF-16 units)
        text = json.dumps(sealed, ensure_ascii=False, separators=(",", ":"))
        message = text.encode("utf-8", "surrogatepass")
    return hmac.digest(key, message, "sha256").hex()


def seals_for(key: bytes, plan: Plan) -> dict[str, object]:
    """What a plan file carries under "seals": the key's id and each worded action's seal."""
    actions = {a.id: seal(key, plan, a) for a in plan.actions if worded(a)}
    return {"key": key_id(key), "actions": actions}


def read_seals(raw: object, source: str) -> Seals:
    """The key id and per-action seals a plan file holds ("", {} when it holds none)."""
    if raw is None:
        return "", {}
    bad = MemtuiError(f"{source}: not a usable plan file ('seals' is not what memtui writes)")
    if not isinstance(raw, dict):
        raise bad
    key, actions = raw.get("key"), raw.get("actions")
    if not isinstance(key, str) or not isinstance(actions, dict):
        raise bad
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in actions.items()):
        raise bad
    return key, actions


def check_seals(plan: Plan, sealed: Seals, key: bytes | None) -> None:
    """Check the wording of a plan read from a file against its seals (a plan changed in
    memory afterwards, e.g. by the model pass, is memtui's own)."""
    sealed_by, seals = sealed
    ours = key is not None and sealed_by == key_id(key)
    for action in plan.actions:
        if not worded(action):
            continue
        recorded = seals.get(action.id)
        # an absorb without a seal: written by a memtui that did not seal absorbs yet
        if ours and key is not None and not (recorded is None and kind_of(action.kind).seals_kept):
            if recorded is None:
                raise MemtuiError(
                    f"plan action {action.id} ({action.kind}) writes wording memtui did not "
                    "seal: the plan file was edited — make a new plan"
                )
            if not hmac.compare_digest(recorded, seal(key, plan, action)):
                raise MemtuiError(
                    f"plan action {action.id} ({action.kind}): its wording was changed after "
                    "memtui wrote the plan (its seal does not match) — make a new plan"
                )
            continue
        plan.decisions.pop(action.id, None)  # a saved approval does not vouch for it
        if not action.needs_decision:
            action.needs_decision = True
            action.reason = (
                "Wording not sealed by this memtui (an older or hand-made plan file, or one "
                f"from another machine): read it before approving. {action.reason}"
            )
        action.details = {**action.details, "unsealed": True}
