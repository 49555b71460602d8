"""Writing a plan file from a stream of actions, byte for byte the file `writing.to_bytes`
writes of the whole plan: what comes before the actions (the plan's header) and after them
(warnings, summary, health, seals) is laid out by the same JSON writer around a mark, and
each action is written in its place as it comes."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from memtui.engine.plan import Action, Plan
from memtui.jsonout import dumps
from memtui.planfile.compact import COMPACT_VERSION, CompactRecords
from memtui.planfile.seals import key_id, seal, worded
from memtui.stores.file.files import fsync_dir, real_path

_MARK = "\x00memtui-plan-actions\x00"
_SEALS_MARK = "\x00memtui-plan-seals\x00"


class PlanWriter:
    """One plan file (`version`, `indent`, sealed with `seal_key`) in pieces: `add(action)`
    for each action in plan order, `end(summary)` once they have all come. What the file says
    before its actions is known before planning (`Plan.file_fields`); what it says after them
    (warnings, summary, health) is read off `head` at the end."""

    def __init__(
        self,
        head: Plan,
        version: int = 2,
        *,
        indent: bool = True,
        seal_key: bytes | None = None,
        by_user: bool = False,
        prints: Mapping[int, str] | None = None,
        hints: Callable[[Action], Any] | None = None,
    ) -> None:
        """`head`: the plan without its actions; `by_user`, `prints` and `hints`:
        `CompactRecords`'."""
        self.head, self.version = head, version
        self.indent = indent and version == 1
        self.key = seal_key
        self.seals: dict[str, str] = {}
        self.compact = (
            CompactRecords(head, by_user, prints, hints) if version == COMPACT_VERSION else None
        )
        self.count = 0

    def _fields(self, actions: list[Any], summary: dict[str, int], seals: Any) -> dict[str, Any]:
        fields = self.head.file_fields(actions, self.version)
        fields["summary"] = summary
        if self.key is not None:
            fields["seals"] = seals
        return fields

    def _start(self) -> bytes:
        text = dumps(self._fields([_MARK], {}, None), indent=self.indent)
        return text[: text.index(dumps(_MARK))]

    def add(self, action: Action) -> bytes:
        if self.key is not None and (words := worded(action)):
            self.seals[action.id] = seal(self.key, self.head, action, words)
        if self.compact is None:
            return self._record(action.to_dict())
        return b"".join(self._record(r) for r in self.compact.feed(action))

    def _record(self, record: dict[str, Any]) -> bytes:
        text = dumps(record, indent=self.indent)
        if self.indent:
            text = text.replace(b"\n", b"\n    ")
        sep = self._start() if not self.count else b",\n    " if self.indent else b","
        self.count += 1
        return sep + text

    def end(self, summary: dict[str, int]) -> bytes:
        seals = {"key": key_id(self.key), "actions": self.seals} if self.key else None
        out = b"".join(self._record(r) for r in self.compact.close()) if self.compact else b""
        if not self.count:
            return dumps(self._fields([], summary, seals), indent=self.indent)
        text = dumps(self._fields([_MARK], summary, _SEALS_MARK), indent=self.indent)
        rest = text[text.index(dumps(_MARK)) + len(dumps(_MARK)) :]
        if seals is None:
            return out + rest
        sealed = dumps(seals, indent=self.indent)
        if self.indent:
            sealed = sealed.replace(b"\n", b"\n  ")
        return out + rest.replace(dumps(_SEALS_MARK), sealed)


class AtomicFile:
    """A file written in pieces that appears whole or not at all (writing.py's
    `atomic_write`, in pieces): a temp file beside it, synced, renamed over it."""

    def __init__(self, path: Path, mode: int = 0o600) -> None:
        self.path = real_path(path)
        while True:
            name = f".{self.path.name}.memtui-tmp-{os.getpid()}.{os.urandom(4).hex()}"
            self.tmp = self.path.with_name(name)
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                self.fd = os.open(self.tmp, flags, mode)
            except FileExistsError:
                continue
            break
        self.mode = mode
        self.committed = False

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def commit(self) -> None:
        os.fchmod(self.fd, self.mode)
        os.fsync(self.fd)
        os.close(self.fd)
        self.fd = -1
        os.replace(self.tmp, self.path)
        self.committed = True
        fsync_dir(self.path.parent)

    def discard(self) -> None:
        """Gone unless committed."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if not self.committed:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)


def tee(
    actions: Iterator[Action],
    outputs: Sequence[tuple[PlanWriter, Callable[[bytes], None]]],
    summary: Callable[[], dict[str, int]],
    each: Callable[[Action], None] | None = None,
) -> None:
    """The actions, once, to every output (a writer and where its pieces go) and to `each`;
    then the files' ends, with the `summary` the actions add up to."""
    for action in actions:
        for writer, put in outputs:
            put(writer.add(action))
        if each is not None:
            each(action)
    counts = summary()
    for writer, put in outputs:
        put(writer.end(counts))
