"""The consolidation profiles: every parameter of every rule, in one typed place.

`pi`, `longterm` and `thesearch` reproduce their source systems (DESIGN.md §4); `default` (for
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
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError

PROFILE_NAMES = ("pi", "longterm", "thesearch", "default")
DEFAULT_FOR_FORMAT = {"pi": "pi", "longterm": "longterm", "native": "default"}


@dataclass(frozen=True, slots=True)
class Profile:
    name: str
    description: str
    method: str
    """Similarity method for duplicates and merges."""

    # which entries take part
    min_importance: float = 0.0
    """Candidates need at least this importance (tenured entries always qualify)."""
    exclude_user_source: bool = False
    """Leave entries the user wrote by hand alone (pi)."""

    # decay
    decay_model: str | None = None
    """`pi`, `longterm`, `halflife`, `ebbinghaus`, or none."""
    decay_rate: float = 1.0
    """Per-day factor for the pi and longterm models."""
    decay_min_change: float = 0.01
    """Decay actions only when importance moves at least this much."""
    apply_decay: bool = True
    """Write decayed importance back (thesearch only weighs with it)."""

    # absorbing near-exact duplicates
    absorb_threshold: float | None = None
    absorb_into: str = "older"
    """`older` (pi) or `important` (longterm: the higher importance keeps its content)."""
    absorb_boost: float = 0.0
    """Importance added to the entry that absorbs (pi: +0.05)."""

    # merging related entries
    merge_threshold: float | None = None
    merge_below: float | None = None
    """Pairs at or above this are absorbed instead of merged (longterm: 0.95)."""
    cluster_min: int = 2
    cluster_max: int = 8
    merge_rule: str = "keep-base"
    """`pi` (best member's wording, pi's field rules), `longterm` (`base；other`), `thesearch`,
    `memtui` (linkage groups, rule wording: engine/grouping.py, engine/wording.py)."""
    linkage: str = "average"
    """How the `memtui` rule groups candidates: `average`, `complete` or `single` (chaining)."""
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
    expire_kind: str | None = None
    """`expire` (status deleted), `archive`, `deprecate`, or none."""
    expire_after_days: float = 30.0
    expire_below: float = 0.3
    protect_top: int = 0
    """The entries with most incoming supersedes links never expire."""
    guard_once_important: bool = False
    """Expiring/archiving an identity, preference or fact that was once important (importance
    ≥ `guard_importance` before decay, or seen `guard_evidence` times) needs a decision."""
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

    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        out["conflict_categories"] = list(self.conflict_categories)
        return out


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
        absorb_threshold=0.8,
        absorb_into="older",
        absorb_boost=0.05,
        merge_threshold=0.3,
        cluster_min=2,
        cluster_max=8,
        merge_rule="pi",
        wording_max_chars=200,
        archive_line=0.2,
    ),
    "longterm": Profile(
        name="longterm",
        description="the Go long-term memory: tf-cosine absorb and merge, 0.995/day decay, expiry",
        method="tf-cosine",
        decay_model="longterm",
        decay_rate=0.995,
        absorb_threshold=0.95,
        absorb_into="important",
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
    ),
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
    "default": Profile(
        name="default",
        description="memtui's own: idf-weighted content words, average linkage, rule wording",
        method="memtui",
        decay_model="longterm",
        decay_rate=0.995,
        absorb_threshold=0.9,
        absorb_into="important",
        # chosen on the labelled set's dev split: the best grouping F1 at precision ≥ 0.8
        # (bench/quality_bench.py --sweep); pairs just under it may be conflicts to decide
        merge_threshold=0.55,
        cluster_max=8,
        merge_rule="memtui",
        linkage="average",
        wording_max_chars=500,
        conflict_low=0.45,
        conflict_high=0.55,
        expire_kind="archive",
        expire_after_days=30.0,
        expire_below=0.3,
        protect_top=3,
        guard_once_important=True,
    ),
}


def profile_for_format(format_name: str) -> str:
    return DEFAULT_FOR_FORMAT.get(format_name, "default")


def get_profile(name: str, overrides_file: Path | None = None) -> Profile:
    if name not in PROFILES:
        raise MemtuiError(f"unknown profile {name!r} (use {', '.join(PROFILE_NAMES)})")
    profile = PROFILES[name]
    if overrides_file is None:
        return profile
    return apply_overrides(profile, _read_overrides(overrides_file).get(name, {}), overrides_file)


def _read_overrides(path: Path) -> dict[str, dict[str, Any]]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MemtuiError(f"config file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise MemtuiError(f"config file {path}: cannot read it ({e})") from None
    except tomllib.TOMLDecodeError as e:
        raise MemtuiError(f"config file {path}: not valid TOML ({e})") from None
    profiles = raw.get("profiles", {})
    if not isinstance(profiles, dict) or not all(isinstance(v, dict) for v in profiles.values()):
        raise MemtuiError(f"config file {path}: [profiles.NAME] must be tables")
    return profiles


def apply_overrides(profile: Profile, values: dict[str, Any], source: Path | str) -> Profile:
    fields = {f.name: f for f in dataclasses.fields(Profile)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        if key in ("name", "extra") or key not in fields:
            raise MemtuiError(f"{source}: [profiles.{profile.name}] has no parameter {key!r}")
        current = getattr(profile, key)
        expected = type(current) if current is not None else None
        if isinstance(current, tuple):
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise MemtuiError(
                    f"{source}: [profiles.{profile.name}] {key} must be a list of strings"
                )
            value = tuple(value)
        elif isinstance(current, bool) or expected is bool:
            if not isinstance(value, bool):
                raise MemtuiError(
                    f"{source}: [profiles.{profile.name}] {key} must be true or false"
                )
        elif isinstance(current, int | float) or current is None:
            if isinstance(value, bool) or not isinstance(value, int | float | str):
                raise MemtuiError(f"{source}: [profiles.{profile.name}] {key} has the wrong type")
            if isinstance(current, int) and not isinstance(value, int):
                raise MemtuiError(
                    f"{source}: [profiles.{profile.name}] {key} must be a whole number"
                )
        elif not isinstance(value, type(current)):
            raise MemtuiError(
                f"{source}: [profiles.{profile.name}] {key} must be a {type(current).__name__}"
            )
        changes[key] = value
    return dataclasses.replace(profile, **changes)
