"""Reading a plan file: only a regular file, within the size limits; JSON (or pi's JSON with a
lone surrogate in it); the plan it holds, with its decisions and seals; and `load`, which
returns the plan complete and checked against the store it is loaded for."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from memtui.engine.kinds import ACTION_KINDS
from memtui.engine.plan import PLAN_FORMAT, Action, Plan
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused
from memtui.planfile.checks import check_fits
from memtui.planfile.compact import actions_from_compact
from memtui.planfile.full import action_from_dict
from memtui.planfile.seals import Seals, read_seals
from memtui.stores import MemoryStore
from memtui.stores.formats.pi_json import PiJsonError, read_checked
from memtui.times import parse_iso_or_none

READ_VERSIONS = (1, 2)

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
            # as much as the file holds (a read of `limit` bytes would take that much memory
            # first), then whatever it grew by, up to the limit
            data = head + f.read(max(0, min(limit, st.st_size) + 1 - len(head)))
            if len(data) > st.st_size and len(data) <= limit:
                data += f.read(limit + 1 - len(data))
        except OSError as e:
            raise MemtuiError(f"{path}: cannot read it ({e.strerror})") from None
        if len(data) > limit:
            raise MemtuiError(f"{path}: grew past the plan size limit of {limit:,} bytes")
        return data


def plan_value(path: str) -> Any:
    """The JSON value of the plan file at `path` (a one-line MemtuiError if it has none)."""
    data = _plan_bytes(path)
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as e:
        try:
            return read_checked(data)  # the plan of a store with a lone surrogate in it
        except PiJsonError:
            raise MemtuiError(
                f"{path}: not a plan file (not valid JSON: {str(e).split(':')[0]})"
            ) from None


class PlanFile(NamedTuple):
    """A plan file as read, before it meets its store."""

    plan: Plan
    """Its actions; those of a version-2 file without their records until `check_fits`."""
    pending: dict[str, Any] | None
    """A version-2 file's compact record of each action, by action id."""
    seals: Seals


def load(path: str, store: MemoryStore, seal_key: bytes | None) -> Plan:
    """The plan in the file at `path`, complete and checked against `store` as it is now
    (its wording against its seals with `seal_key`); a one-line MemtuiError (a ConflictError
    when the entries it touches changed since) for anything else."""
    with gc_paused():  # a million actions and their records, none in a reference cycle
        read = read_file(path)
        check_fits(store, read.plan, read.pending, read.seals, seal_key)
    return read.plan


def read_file(path: str) -> PlanFile:
    """The plan file at `path`, read but not yet checked against a store."""
    value = plan_value(path)
    seals = read_seals(value.pop("seals", None), path) if isinstance(value, dict) else ("", {})
    decided = value.pop("decisions", None) if isinstance(value, dict) else None
    plan, pending = parse(value, path)
    plan.decisions = _read_decisions(decided, plan, path)
    return PlanFile(plan, pending, seals)


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


def parse(data: Any, source: str) -> tuple[Plan, dict[str, Any] | None]:
    """The plan a file's JSON holds, and a version-2 file's compact records by action id; a
    malformed one gets a one-line MemtuiError."""
    plan, actions_raw, version = parse_head(data, source)
    pending = None
    read: list[Action] = []
    if version == 2:
        try:
            read, pending = actions_from_compact(actions_raw, plan.params)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise _bad(source, f"an action is malformed: {e!s}") from None
    seen = KnownActions(source)
    for n, raw in enumerate(read if pending is not None else actions_raw):
        try:
            action = raw if isinstance(raw, Action) else action_from_dict(raw)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise _bad(source, f"action {n} is malformed: {e!s}") from None
        seen.add(action)
        plan.actions.append(action)
    return plan, pending


def _bad(source: str, problem: str) -> MemtuiError:
    return MemtuiError(f"{source}: not a usable plan file ({problem})")


class KnownActions:
    """The actions of a file read so far: each of a known kind, its id its own, after every
    action it depends on."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.ids: set[str] = set()

    def add(self, action: Action) -> None:
        if action.kind not in ACTION_KINDS:
            raise _bad(self.source, f"action {action.id} has an unknown kind {action.kind!r}")
        if action.id in self.ids:
            raise _bad(self.source, f"two actions share the id {action.id!r}")
        if any(d not in self.ids for d in action.depends_on):
            raise _bad(
                self.source, f"action {action.id} depends on an action that does not come before it"
            )
        self.ids.add(action.id)


def parse_head(data: Any, source: str) -> tuple[Plan, list[Any], int]:
    """The plan a file's JSON holds without its actions (`actions` empty), the file's action
    records, and its version; a one-line MemtuiError for what is malformed besides them."""
    if not isinstance(data, dict) or data.get("format") != PLAN_FORMAT:
        raise _bad(source, f"'format' is not {PLAN_FORMAT!r}")
    version = data.get("version")
    if version not in READ_VERSIONS or isinstance(version, bool):
        raise _bad(source, f"version {version!r}; this memtui reads versions 1 and 2")
    for key in ("store", "store_format", "store_fingerprint", "profile", "now"):
        if not isinstance(data.get(key), str):
            raise _bad(source, f"{key!r} is missing or not a string")
    actions_raw = data.get("actions")
    if not isinstance(actions_raw, list):
        raise _bad(source, "'actions' is not a list")
    now = parse_iso_or_none(data["now"])
    if now is None:
        raise _bad(source, "'now' is not an RFC 3339 time")
    params = data["params"] if isinstance(data.get("params"), dict) else {}
    health = data["health"] if isinstance(data.get("health"), dict) else {}
    warnings = data.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise _bad(source, "'warnings' is not a list of text")
    plan = Plan(
        data["store"],
        data["store_format"],
        data["store_fingerprint"],
        data["profile"],
        now,
        params,
        [],
        health,
    )
    plan.warnings = warnings
    return plan, actions_raw, version
