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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from memtui.engine.plan import Action
from memtui.model import Memory, memory_values

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

# a record's forms (the first item of its tuple; a bare int is its place in the store)
_WHOLE, _CHANGED, _KNOWN, _FIRST = 1, 2, 3, 4


def places(memories: Sequence[Memory]) -> dict[int, int]:
    """Each of the store's entries' place, by identity."""
    return {id(m): n for n, m in enumerate(memories)}


def encode(actions: Iterable[Action], place: Mapping[int, int]) -> list[tuple[Any, ...]]:
    """`actions` (one user's, all of them: the records they share are found among them) as
    plain tuples that pickle fast."""
    actions = list(actions)
    uses: dict[int, int] = {}
    for a in actions:
        for ident in {id(m) for m in (*a.before, *a.after)}:
            uses[ident] = uses.get(ident, 0) + 1
    shared = {i for i, n in uses.items() if n > 1 and i not in place}
    sent: dict[int, int] = {}

    def ref(m: Memory, before: Sequence[Memory] | None) -> Any:
        at = place.get(id(m))
        if at is not None:
            return at
        serial = sent.get(id(m))
        if serial is not None:
            return (_KNOWN, serial)
        form = _form(m, before)
        if id(m) in shared:
            serial = sent[id(m)] = len(sent)
            return (_FIRST, serial, form)
        return form

    return [
        (
            _ACTION_VALUES(a),
            [ref(m, None) for m in a.before],
            [ref(m, a.before) for m in a.after],
        )
        for a in actions
    ]


def _form(m: Memory, before: Sequence[Memory] | None) -> tuple[Any, ...]:
    values = memory_values(m)
    if before:
        for k, base in enumerate(before):
            if base.id == m.id:
                changes: list[Any] = []
                for i, (was, now) in enumerate(zip(memory_values(base), values, strict=True)):
                    if was is not now:  # identity: an equal value of another type differs
                        changes += (i, now)
                if len(changes) <= 2 * _DIFF_MOST:
                    return (_CHANGED, k, tuple(changes))
                break
    return (_WHOLE, values)


class Decoder:
    """Encoded actions back as `Action`s with their records (one per user: the serials of
    shared records are the user's). `held`: every shared record made, by identity."""

    def __init__(self, memories: Sequence[Memory], held: set[int]) -> None:
        self.memories = memories
        self.held = held
        self.known: dict[int, Memory] = {}

    def actions(self, encoded: Iterable[tuple[Any, ...]]) -> Iterator[Action]:
        record = self._record
        for values, before_refs, after_refs in encoded:
            ident, kind, targets, rule, scores, reason, deps, decide, actor, details = values
            before = [record(r, ()) for r in before_refs]
            after = [record(r, before) for r in after_refs]
            yield Action(
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

    def _record(self, ref: Any, before: Sequence[Memory]) -> Memory:
        if type(ref) is int:
            return self.memories[ref]
        form = ref[0]
        if form == _CHANGED:
            return _changed(before[ref[1]], ref[2])
        if form == _WHOLE:
            return Memory(*ref[1])
        if form == _KNOWN:
            return self.known[ref[1]]
        m = self.known[ref[1]] = self._record(ref[2], before)
        self.held.add(id(m))
        return m


def _changed(base: Memory, changes: tuple[Any, ...]) -> Memory:
    values = list(memory_values(base))
    for n in range(0, len(changes), 2):
        values[changes[n]] = changes[n + 1]
    return Memory(*values)


def dumps(obj: Any) -> bytes:
    return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)


def loads(data: bytes) -> Any:
    return pickle.loads(data)
