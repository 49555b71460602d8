"""Writing a plan file: version 2 (compact; the default) or 1 (whole records), with the
person's decisions and the seals of its wording; never over a file that is not a plan."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from memtui.closing import close_all
from memtui.engine.plan import Action, Plan
from memtui.errors import MemtuiError
from memtui.jsonout import dumps
from memtui.planfile.compact import compact_plan
from memtui.planfile.full import full_json, full_json_parts
from memtui.planfile.seals import seals_for
from memtui.planfile.streaming import AtomicFile, PlanWriter, tee
from memtui.stores.file.files import atomic_write

_PLAN_HEAD = re.compile(rb'^\{\s*"format"\s*:\s*"memtui-plan"')


def to_bytes(
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


def json_parts(plan: Plan, version: int = 1) -> Iterator[bytes]:
    """`to_bytes(plan, version, indent=False)` in pieces that are each whole UTF-8 text
    (version 1: one per action), so a big plan is printed without one copy of it all."""
    if version == 1:
        yield from full_json_parts(plan)
    else:
        yield dumps(compact_plan(plan))


def write(plan: Plan, path: str, version: int = 2, seal_key: bytes | None = None) -> None:
    target = checked_target(path)
    try:
        atomic_write(target, to_bytes(plan, version, seal_key=seal_key), mode=0o600)
    except OSError as e:
        raise _unwritten(target, e) from None


def checked_target(path: str) -> Path:
    """Where a plan file may be written: a new file or a plan file (never something else)."""
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
    return target


def _unwritten(target: Path, e: OSError) -> MemtuiError:
    if isinstance(e, FileNotFoundError):
        return MemtuiError(f"{target}: its folder does not exist; the plan was not written")
    return MemtuiError(f"{target}: cannot write the plan there ({e.strerror})")


def write_streamed(
    head: Plan,
    summary: Callable[[], dict[str, int]],
    actions: Iterator[Action],
    path: str | None,
    version: int = 2,
    *,
    seal_key: bytes | None = None,
    json_out: Callable[[bytes], None] | None = None,
    json_version: int = 1,
    each: Callable[[Action], None] | None = None,
    by_user: bool = False,
    prints: Mapping[int, str] | None = None,
    hints: Callable[[Action], Any] | None = None,
) -> None:
    """A streamed plan (`head` without its actions, the `actions` once, then their
    `summary`) to the plan file at `path` (as `write` writes it), to `json_out` (as
    `json_parts` prints it) and to `each`, in one pass: its actions are never all held. The
    file is opened before the first action is asked for (nothing is planned for a plan that
    cannot be written), and appears whole or not at all. `actions` is closed however this
    ends (a plan planned in worker processes stops them then, not when it is collected)."""
    try:
        _write_streamed(
            head, summary, actions, path, version, seal_key, json_out, json_version, each,
            by_user, prints, hints,
        )  # fmt: skip
    except BaseException:
        with contextlib.suppress(Exception):  # the first failure is the one to say
            close_all(actions)
        raise
    close_all(actions)


def _write_streamed(
    head: Plan,
    summary: Callable[[], dict[str, int]],
    actions: Iterator[Action],
    path: str | None,
    version: int,
    seal_key: bytes | None,
    json_out: Callable[[bytes], None] | None,
    json_version: int,
    each: Callable[[Action], None] | None,
    by_user: bool,
    prints: Mapping[int, str] | None,
    hints: Callable[[Action], Any] | None,
) -> None:
    outputs: list[tuple[PlanWriter, Callable[[bytes], None]]] = []
    file = None
    if path is not None:
        target = checked_target(path)
        try:
            file = AtomicFile(target)
        except OSError as e:
            raise _unwritten(target, e) from None
        writer = PlanWriter(
            head, version, seal_key=seal_key, by_user=by_user, prints=prints, hints=hints
        )
        outputs.append((writer, _written(file, target)))
    if json_out is not None:
        json_writer = PlanWriter(
            head, json_version, indent=False, by_user=by_user, prints=prints, hints=hints
        )
        outputs.append((json_writer, json_out))
    try:
        tee(actions, outputs, summary, each)
        if file is not None:
            _written(file, target)(None)
    finally:
        if file is not None:
            file.discard()


def _written(file: AtomicFile, target: Path) -> Callable[[bytes | None], None]:
    """Writing a piece of the file (None: committing it); its failures said as `write`'s."""

    def put(data: bytes | None) -> None:
        try:
            if data is None:
                file.commit()
            else:
                file.write(data)
        except OSError as e:
            raise _unwritten(target, e) from None

    return put
