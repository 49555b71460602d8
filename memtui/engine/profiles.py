"""The consolidation profiles: every parameter of every rule, in one typed place.

`pi`, `longterm` and `thesearch` reproduce their sources (docs/design.md#profiles); `default` (for
native stores) is memtui's own method: the `memtui` similarity, average-linkage groups, rule
wording that only adds clauses with new content, decay anchored on use, archive instead of
delete, and a decision before a once-important fact is archived. Any parameter can be
overridden from a TOML file:

    [profiles.pi]
    merge_threshold = 0.35
    cluster_max = 6
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from memtui.engine.choices import (
    DECAY_MODELS,
    EXPIRE_KINDS,
    MERGE_RULES,
    METHODS,
    DecayModelName,
    ExpireKind,
    Linkage,
    MergeRule,
    Method,
)
from memtui.errors import MemtuiError

PROFILE_NAMES = ("pi", "longterm", "thesearch", "default")


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    method: Method
    """Similarity method for duplicates and merges."""

    # which entries take part
    min_importance: float = 0.0
    """Candidates need at least this importance (tenured entries always qualify)."""
    exclude_user_source: bool = False
    """Leave entries the user wrote by hand alone (pi)."""

    # decay
    decay_model: DecayModelName | None = None
    """`pi`, `longterm`, `halflife`, `ebbinghaus`, or none."""
    decay_rate: float = 1.0
    """Per-day factor for the pi and longterm models."""
    decay_min_change: float = 0.01
    """Decay actions only when importance moves at least this much."""
    apply_decay: bool = True
    """Write decayed importance back (thesearch only weighs with it)."""

    # absorbing near-exact duplicates
    absorb_threshold: float | None = None
    absorb_boost: float = 0.0
    """Importance added to the entry that absorbs (pi: +0.05)."""

    # merging related entries
    merge_threshold: float | None = None
    merge_below: float | None = None
    """Pairs at or above this are absorbed instead of merged (longterm: 0.95)."""
    cluster_min: int = 2
    cluster_max: int = 8
    merge_rule: MergeRule = "keep-base"
    """`pi` (best member's wording, pi's field rules), `longterm` (`base；other`), `thesearch`,
    `memtui` (linkage groups, rule wording: engine/grouping.py, engine/wording.py)."""
    linkage: Linkage = "average"
    """How the `memtui` rule groups candidates: `average`, `complete` or `single` (chaining)."""
    subject_threshold: float | None = None
    """The `memtui` rule's second tier (None: off): entries about one subject whose average
    similarity reaches this line become one entry that keeps every fact (engine/subject_tier.py).
    """
    subject_cosine: float | None = None
    """With sentence embeddings: the cosine at which a pair reaches the subject line (a pair's
    subject score is max(lexical, its cosine scaled so this lands on the line, 1 on 1))."""
    subject_cosine_cjk: float | None = None
    """The same for two texts mostly in CJK script (default: `subject_cosine`)."""
    wording_max_chars: int = 500
    """The `memtui` rule's merged text never grows past this (pi's own cap is 200)."""
    max_paths: int = 20
    max_tags: int = 5

    # conflicts for a person (or the LLM) to decide
    conflict_low: float | None = None
    conflict_high: float | None = None
    conflict_categories: tuple[str, ...] = ("identity", "preference", "fact")
    conflicts_per_entry: int = 3

    # expiry
    expire_kind: ExpireKind | None = None
    """`expire` (status deleted), `archive`, `deprecate`, or none."""
    expire_after_days: float = 30.0
    expire_below: float = 0.3
    protect_top: int = 0
    """The entries with most incoming supersedes links never expire."""
    guard_once_important: bool = True
    """Expiring/archiving an identity, preference or fact that was once important (importance
    ≥ `guard_importance` before decay, or seen `guard_evidence` times) needs a decision. On in
    every profile: the agent's own rule still proposes it, memtui asks before it goes."""
    guard_importance: float = 0.8
    guard_evidence: int = 2
    archive_line: float | None = None
    """Shown as the archive line in decay views (pi: below 0.2 it is no longer injected)."""

    # thesearch
    thesearch_merge_score: float = 0.90
    thesearch_title_weight: float = 0.4
    promote_evidence: int = 3
    promote_evidence_with_weight: int = 2
    promote_weight: float = 0.5
    promote_after_hours: float = 24.0
    deprecate_weight: float = 0.1
    insight_threshold: float = 0.5
    """Entries this similar (and three or more together) are offered to the LLM for insights."""

    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def decays_unused_by_half_life(self) -> bool:
        """memtui's own method: a store where no use was ever recorded decays with the
        half-life from creation (engine/decay.py `decay_for_store`), not by this rate."""
        return self.merge_rule == "memtui"

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["conflict_categories"] = list(self.conflict_categories)
        if self.subject_threshold is None:
            # a plan's params name the subject tier only where it is on: the faithful
            # profiles' plans stay what they were
            for key in ("subject_threshold", "subject_cosine", "subject_cosine_cjk"):
                del out[key]
        return out


_LONGTERM = Profile(
    name="longterm",
    description="the Go long-term memory: tf-cosine absorb and merge, 0.995/day decay, expiry",
    method="tf-cosine",
    decay_model="longterm",
    decay_rate=0.995,
    absorb_threshold=0.95,
    merge_threshold=0.80,
    merge_below=0.95,
    cluster_max=8,
    merge_rule="longterm",
    conflict_low=0.75,
    conflict_high=0.95,
    expire_kind="expire",
    expire_after_days=30.0,
    expire_below=0.3,
    protect_top=3,
)

PROFILES: dict[str, Profile] = {
    "pi": Profile(
        name="pi",
        description="the pi agent's consolidator: 2-gram overlap clusters, 0.95/day decay",
        method="pi",
        min_importance=0.3,
        exclude_user_source=True,
        decay_model="pi",
        decay_rate=0.95,
        decay_min_change=0.0,  # pi decays every entry on every run
        # pi's consolidator absorbs nothing (its +0.05 belongs to the extractor); set
        # absorb_threshold = 0.8 to absorb near-identical pairs as memtui's own extra rule
        absorb_threshold=None,
        absorb_boost=0.05,
        merge_threshold=0.3,
        cluster_min=2,
        cluster_max=8,
        merge_rule="pi",
        wording_max_chars=200,
        archive_line=0.2,
    ),
    "longterm": _LONGTERM,
    "thesearch": Profile(
        name="thesearch",
        description="the consolidation-science skill: weighted merge, promote, deprecate",
        method="tf-cosine",
        decay_model="halflife",
        apply_decay=False,
        merge_rule="thesearch",
        conflict_low=0.75,
        expire_kind="deprecate",
        expire_after_days=30.0,
        expire_below=0.1,
    ),
    # memtui's own: what differs from the Go system it grew from
    "default": dataclasses.replace(
        _LONGTERM,
        name="default",
        description="memtui's own: idf-weighted content words, average linkage, rule wording",
        method="memtui",
        absorb_threshold=0.9,
        # chosen on the labelled set's dev split: the best grouping F1 at precision ≥ 0.8
        # (bench/quality_bench.py --sweep); pairs just under it may be conflicts to decide
        merge_threshold=0.55,
        # the subject tier, chosen on the consolidation set's dev split (76 stores, 1,537 facts;
        # pairwise "kept as one entry"), precision first: words alone 0.25 (P 0.835 R 0.322
        # F1 0.465; en 0.845 / 0.407, zh 0.706 / 0.078; at 0.20 P 0.756); with embeddings a
        # cosine of 0.65 reaches it in both scripts (P 0.825 R 0.387 F1 0.527; en 0.841 /
        # 0.452, zh 0.735 / 0.199; zh at 0.60: P 0.627 R 0.314). Before the tier: P 0.846
        # R 0.059 (words) on the first 20 stores
        subject_threshold=0.25,
        subject_cosine=0.65,
        subject_cosine_cjk=0.65,
        merge_below=None,
        merge_rule="memtui",
        conflict_low=0.45,
        conflict_high=0.55,
        expire_kind="archive",
    ),
}


def get_profile(name: str) -> Profile:
    """A built-in profile; `memtui.config.resolve_profile` adds the user's overrides."""
    if name not in PROFILES:
        raise MemtuiError(f"unknown profile {name!r} (use {', '.join(PROFILE_NAMES)})")
    return PROFILES[name]


# -- overrides ([profiles.NAME] in the config file) -------------------------------------------

_FIXED = ("name", "description", "extra")


def _between(low: float, high: float, *, above: bool = False) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if (value > low if above else value >= low) and value <= high:
            return None
        side = "above" if above else "at least"
        return f"must be {side} {low:g} and at most {high:g}, got {value:g}"

    return check


def _at_least(low: int) -> Callable[[Any], str | None]:
    return lambda value: None if value >= low else f"must be at least {low}, got {value}"


def _one_of(choices: Sequence[str]) -> Callable[[Any], str | None]:
    return lambda value: (
        None if value in choices else f"must be one of {', '.join(choices)}; got {value!r}"
    )


def _limits() -> dict[str, Callable[[Any], str | None]]:
    """What each overridable parameter may be, beyond its type."""
    score = _between(0, 1, above=True)  # a similarity line the candidate search starts from
    share = _between(0, 1)
    return {
        "method": _one_of(METHODS),
        "decay_model": _one_of(DECAY_MODELS),
        "merge_rule": _one_of(MERGE_RULES),
        "expire_kind": _one_of(EXPIRE_KINDS),
        **dict.fromkeys(
            (
                "absorb_threshold",
                "merge_threshold",
                "merge_below",
                "subject_threshold",
                "subject_cosine",
                "subject_cosine_cjk",
                "conflict_low",
                "conflict_high",
                "thesearch_merge_score",
                "insight_threshold",
                "decay_rate",
            ),
            score,
        ),
        **dict.fromkeys(
            (
                "min_importance",
                "decay_min_change",
                "absorb_boost",
                "expire_below",
                "archive_line",
                "promote_weight",
                "deprecate_weight",
            ),
            share,
        ),
        "thesearch_title_weight": lambda v: (
            None if 0 <= v < 1 else f"must be at least 0 and below 1, got {v:g}"
        ),
        "cluster_min": _at_least(2),
        "cluster_max": _at_least(2),
        **dict.fromkeys(
            (
                "max_paths",
                "conflicts_per_entry",
                "promote_evidence",
                "promote_evidence_with_weight",
            ),
            _at_least(1),
        ),
        **dict.fromkeys(("max_tags", "protect_top"), _at_least(0)),
        **dict.fromkeys(("expire_after_days", "promote_after_hours"), _between(0, math.inf)),
    }


def _together(profile: Profile) -> tuple[str, str] | None:
    """A parameter that does not fit the others, and why."""
    if profile.cluster_min > profile.cluster_max:
        return "cluster_min", f"must be at most cluster_max ({profile.cluster_max})"
    low, high = profile.conflict_low, profile.conflict_high
    if low is not None and high is not None and low > high:
        return "conflict_low", f"must be at most conflict_high ({high:g})"
    if profile.thesearch_merge_score <= profile.thesearch_title_weight:
        # the title part alone reaches the line: every pair would qualify
        return (
            "thesearch_merge_score",
            f"must be above thesearch_title_weight ({profile.thesearch_title_weight:g}), "
            f"got {profile.thesearch_merge_score:g}",
        )
    return None


def describe(value: object) -> str:
    """A TOML value as a person reads it in an error message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:39] + "…"
        return f"the string {json.dumps(shown, ensure_ascii=False)}"
    if isinstance(value, int | float):
        return f"the number {value:g}" if isinstance(value, float) else f"the number {value}"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a table"
    return f"a {type(value).__name__}"


def _typed(hint: Any, value: object) -> tuple[Any, str | None]:
    """`value` as the annotation `hint` wants it, or (None, what was expected instead)."""
    origin = get_origin(hint)
    if origin in (Union, UnionType):
        options = [a for a in get_args(hint) if a is not type(None)]  # TOML has no null
        return _typed(options[0], value) if len(options) == 1 else (value, None)
    if origin is Literal:
        choices = get_args(hint)
        return (value, None) if value in choices else (None, _choices(choices))
    if origin is tuple:
        item = get_args(hint)[0]
        converted = [_typed(item, v) for v in value] if isinstance(value, list) else None
        if converted is not None and all(problem is None for _, problem in converted):
            return tuple(v for v, _ in converted), None
        return None, f"a list of {_PLURAL.get(item, item)}"
    if isinstance(hint, type) and issubclass(hint, Enum):
        values = [m.value for m in hint]
        return (hint(value), None) if value in values else (None, _choices(values))
    if hint is bool or isinstance(value, bool):
        return (
            (value, None) if hint is bool and isinstance(value, bool) else (None, _expected(hint))
        )
    if hint is int and isinstance(value, int):
        return value, None
    if hint is float and isinstance(value, int | float):
        return float(value), None
    if hint is str and isinstance(value, str):
        return value, None
    return None, _expected(hint)


_EXPECTED: dict[Any, str] = {
    bool: "true or false",
    int: "a whole number",
    float: "a number",
    str: "a string",
}
_PLURAL: dict[Any, str] = {int: "whole numbers", float: "numbers", str: "strings"}


def _expected(hint: Any) -> str:
    return _EXPECTED.get(hint, str(hint))


def _choices(values: Sequence[object]) -> str:
    return "one of " + ", ".join(str(v) for v in values)


def apply_overrides(profile: Profile, values: Mapping[str, object], source: Path | str) -> Profile:
    """`profile` with `values` (a `[profiles.NAME]` table) set, each checked against its
    field's type and range; a one-line MemtuiError names `source`, the table and the key."""
    where = f"{source}: [profiles.{profile.name}]"
    hints = get_type_hints(Profile)
    limits = _limits()
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key in _FIXED or key not in hints:
            raise MemtuiError(f"{where} has no parameter {key!r}")
        typed, expected = _typed(hints[key], value)
        if expected is not None:
            raise MemtuiError(f"{where} {key}: expected {expected}, got {describe(value)}")
        check = limits.get(key)
        problem = check(typed) if check is not None else None
        if problem is not None:
            raise MemtuiError(f"{where} {key}: {problem}")
        changes[key] = typed
    changed = dataclasses.replace(profile, **changes)
    clash = _together(changed)
    if clash is not None:
        raise MemtuiError(f"{where} {clash[0]}: {clash[1]}")
    return changed
