"""Actions as compact bytes and back, for the streamed plan's spool (service/plan_stream.py)
and for the parts worker processes send (service/parallel_plan.py).

A record travels as the cheapest of: its place in the store (the parent has the store's
entries: they are never sent), the serial of a record that more than one of the actions share
(sent once, then named: a version-2 file relies on that identity), the fields it changes from
a record of its own action's `before` with the same id (a decay or an expiry changes two), or
all its fields. Encoding runs where the actions were made (a worker), decoding in the parent.
"""

from __future__ import annotations

import operator
import pickle
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress
from typing import Any

from memtui.engine.plan import Action
from memtui.model import MEMORY_FIELDS, Memory, memory_values
from memtui.planfile.compact import fingerprint

_ACTION_VALUES = operator.attrgetter(
    "id",
    "kind",
    "targets",
    "rule",
    "scores",
    "reason",
    "depends_on",
    "needs_decision",
    "actor",
    "details",
)
_DIFF_MOST = 8
"""Fields past which a record travels whole rather than as its changes."""

_FIELDS = range(len(MEMORY_FIELDS))
_SET = [getattr(Memory, name).__set__ for name in MEMORY_FIELDS]
"""Each field's setter, by number."""

# a record's forms (the first item of its tuple; a bare int is its place in the store)
_WHOLE, _CHANGED, _KNOWN, _FIRST = 1, 2, 3, 4


def places(memories: Sequence[Memory]) -> dict[int, int]:
    """Each of the store's entries' place, by identity."""
    return {id(m): n for n, m in enumerate(memories)}


def encode(
    actions: Iterable[Action],
    place: Mapping[int, int],
    hints: Callable[[Action], Any] | None = None,
) -> list[tuple[Any, ...]]:
    """`actions` (one user's, all of them: the records they share are found among them) as
    plain tuples that pickle fast, with the fingerprint of each store entry they start from
    and the action's `hints` (planfile's `RowHints`), made here, where the user is planned,
    rather than by the plan file's writer."""
    actions = list(actions)
    once: set[int] = set()
    twice: set[int] = set()
    for a in actions:
        for ident in {*map(id, a.before), *map(id, a.after)}:
            if ident in once:
                twice.add(ident)
            else:
                once.add(ident)
    shared = {i for i in twice if i not in place}
    sent: dict[int, int] = {}
    printed: set[int] = set()
    out = []
    for a in actions:
        before = []
        prints: list[Any] = []
        for m in a.before:
            at = place.get(id(m))
            if at is None:
                before.append(_ref(m, (), {}, shared, sent))
                continue
            before.append(at)
            if at not in printed:
                printed.add(at)
                prints += (at, fingerprint(m))
        first = _first_places(a.before)
        after = [
            at if (at := place.get(id(m))) is not None else _ref(m, a.before, first, shared, sent)
            for m in a.after
        ]
        hint = None if hints is None else hints(a)
        out.append((_ACTION_VALUES(a), before, after, tuple(prints), hint))
    return out


def _first_places(records: Sequence[Memory]) -> dict[str, int]:
    """Each id's first place among `records`."""
    first: dict[str, int] = {}
    for k, m in enumerate(records):
        first.setdefault(m.id, k)
    return first


def _ref(
    m: Memory,
    before: Sequence[Memory],
    first: Mapping[str, int],
    shared: set[int],
    sent: dict[int, int],
) -> Any:
    serial = sent.get(id(m))
    if serial is not None:
        return (_KNOWN, serial)
    form = _form(m, before, first)
    if id(m) in shared:
        serial = sent[id(m)] = len(sent)
        return (_FIRST, serial, form)
    return form


def _form(m: Memory, before: Sequence[Memory], first: Mapping[str, int]) -> tuple[Any, ...]:
    """`first`: each id's first place in `before`."""
    values = memory_values(m)
    k = first.get(m.id)
    if k is not None:
        # by identity: an equal value of another type (1 and 1.0) is written otherwise
        changed = tuple(compress(_FIELDS, map(operator.is_not, memory_values(before[k]), values)))
        if len(changed) <= _DIFF_MOST:
            return (_CHANGED, k, changed, tuple(values[i] for i in changed))
    return (_WHOLE, values)


class Decoder:
    """Encoded actions back as `Action`s with their records (one per user: the serials of
    shared records are the user's). `held`: every shared record made, by identity;
    `prints`: the fingerprints of the store's entries, by identity, as they come; `latest`:
    the action last made, its records and its hint (`Hints`)."""

    def __init__(
        self,
        memories: Sequence[Memory],
        held: set[int],
        prints: dict[int, str] | None = None,
        latest: Hints | None = None,
    ) -> None:
        self.memories = memories
        self.held = held
        self.prints = prints
        self.latest = latest
        self.known: dict[int, Memory] = {}

    def actions(self, encoded: Iterable[tuple[Any, ...]]) -> Iterator[Action]:
        record = self._record
        memories, prints, latest = self.memories, self.prints, self.latest
        for values, before_refs, after_refs, found, hint in encoded:
            if prints is not None:
                for n in range(0, len(found), 2):
                    prints[id(memories[found[n]])] = found[n + 1]
            ident, kind, targets, rule, scores, reason, deps, decide, actor, details = values
            before = [record(r, ()) for r in before_refs]
            after = [record(r, before) for r in after_refs]
            action = Action(
                ident,
                kind,
                targets,
                before,
                after,
                rule,
                scores,
                reason,
                deps,
                decide,
                actor,
                details,
            )
            if latest is not None:
                latest.made(action, hint)
            yield action

    def _record(self, ref: Any, before: Sequence[Memory]) -> Memory:
        if type(ref) is int:
            return self.memories[ref]
        form = ref[0]
        if form == _CHANGED:
            return _changed(before[ref[1]], ref[2], ref[3])
        if form == _WHOLE:
            return Memory(*ref[1])
        if form == _KNOWN:
            return self.known[ref[1]]
        m = self.known[ref[1]] = self._record(ref[2], before)
        self.held.add(id(m))
        return m


class Hints:
    """The hint of the action decoded last, for the plan file's writer (`CompactRecords`),
    which takes each action as soon as it is decoded (the join reads the spool in plan
    order); an action the join has since given other records has none (found again)."""

    def __init__(self) -> None:
        self.action: Action | None = None
        self.records: tuple[Memory, ...] = ()
        self.hint: Any = None

    def made(self, action: Action, hint: Any) -> None:
        self.action, self.hint = action, hint
        self.records = (*action.before, *action.after)

    def __call__(self, action: Action) -> Any:
        if action is not self.action:
            return None
        records = self.records
        if len(records) != len(action.before) + len(action.after) or not all(
            map(operator.is_, records, (*action.before, *action.after))
        ):
            return None
        return self.hint


def _changed(base: Memory, fields: tuple[int, ...], new: tuple[Any, ...]) -> Memory:
    m = Memory(*memory_values(base))
    for n, value in zip(fields, new, strict=True):
        _SET[n](m, value)
    return m


def dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> Any:
    return pickle.loads(data)
