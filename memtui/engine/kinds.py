"""The kinds of plan action, declared once: what each may change in an entry, the status it
leaves, whether it combines entries or creates one, how a plan file encodes it in bulk, whether
its kept wording is sealed, and what it is about when shown. Checking a plan (`memtui.service`),
plan files (`memtui.planfile`) and the views ask this table; a new kind is a row here and the
rule that makes it (`engine/rules/`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from memtui.errors import MemtuiError
from memtui.model import Status

Bulk = Literal["decay", "expiry", "absorb"]
"""How a plan file (version 2) holds a plain action of the kind: a row of a bulk record."""
Subject = Literal["kept", "pair", "entry"]
"""What an action is about when shown: the wording it keeps, the two entries it weighs, or the
entry it changes."""


@dataclass(frozen=True, slots=True)
class ActionKind:
    name: str
    may_change: frozenset[str] = frozenset()
    """The fields (as `Memory.to_dict` names them) it may change in an entry it keeps, besides
    `updated_at` and `version`; a combining kind is checked by its members instead."""
    status_after: frozenset[Status] | None = None
    """The statuses an entry it changes may be left in (None: any its fields allow)."""
    combines: bool = False
    """It weighs several entries as one (merge, absorb, supersede, …): one user's entries only,
    and its result is bounded by its members'."""
    creates: bool = False
    """It may add an entry the store does not hold."""
    retires: bool = False
    """It must retire at least one of its entries into another."""
    folds_identical: bool = False
    """It may combine entries of different users that say the same thing (pi's dedupe folds
    identical content store-wide, whoever it belongs to)."""
    decays: bool = False
    """Its new importance is the plan's decay model's, recomputed when the plan is checked."""
    bulk: Bulk | None = None
    bulk_status: Status | None = None
    """An expiry row's status (the kind's own `status_after` may allow more)."""
    verb: str = ""
    """How an expiry's review text says what happens to the entry."""
    seals_kept: bool = False
    """Which member's wording it keeps is its choice: that wording is sealed in a plan file."""
    capped: bool = False
    """It groups entries into one: no more of them than the profile's cap (`cluster_max`)."""
    subject: Subject = "entry"


_RETIRING = frozenset({"status", "superseded_by", "superseded_at"})

ACTION_KINDS: dict[str, ActionKind] = {
    k.name: k
    for k in (
        ActionKind(
            "decay",
            may_change=frozenset({"importance", "last_decayed_at"}),
            decays=True,
            bulk="decay",
        ),
        ActionKind(
            "absorb",
            combines=True,
            retires=True,
            folds_identical=True,
            bulk="absorb",
            seals_kept=True,
            subject="kept",
            capped=True,
        ),
        ActionKind("merge", combines=True, creates=True, retires=True, subject="kept", capped=True),
        ActionKind("conflict", combines=True, subject="pair"),
        ActionKind("supersede", combines=True, subject="pair"),
        ActionKind("insight", combines=True, creates=True),
        ActionKind(
            "expire",
            may_change=frozenset({"status"}),
            status_after=frozenset({Status.DELETED, Status.ARCHIVED}),
            bulk="expiry",
            bulk_status=Status.DELETED,
            verb="expires",
        ),
        ActionKind(
            "archive",
            may_change=frozenset({"status"}),
            status_after=frozenset({Status.ARCHIVED}),
            bulk="expiry",
            bulk_status=Status.ARCHIVED,
            verb="is archived",
        ),
        ActionKind(
            "deprecate",
            may_change=_RETIRING,
            status_after=frozenset({Status.DEPRECATED}),
        ),
        ActionKind(
            "promote", may_change=frozenset({"status"}), status_after=frozenset({Status.ACTIVE})
        ),
    )
}
KINDS = tuple(ACTION_KINDS)
"""Every kind's name, in the order a plan's summary counts them."""


def kind_of(name: str) -> ActionKind:
    """The kind named `name`; a MemtuiError for a name no row declares."""
    found = ACTION_KINDS.get(name)
    if found is None:
        raise MemtuiError(f"no action kind {name!r} (kinds: {', '.join(KINDS)})")
    return found


def bulk_kinds(bulk: Bulk) -> list[ActionKind]:
    """The kinds a plan file encodes as rows of that bulk form."""
    return [k for k in ACTION_KINDS.values() if k.bulk == bulk]
