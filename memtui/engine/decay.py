"""Decay models: how a memory's importance fades with time, and when it crosses a line.

Each model answers "importance at day d from now" and "the day it crosses x".

- `pi`: importance × 0.95^days since the last decay (pi's lastDecayedAt); tenured never decays.
- `longterm`: importance × 0.995^days. The Go system counts days from creation on every run,
  so decay compounds and use does not count; memtui counts from the latest of created, last
  accessed and last decayed, and records the new anchor when it applies decay, so running a
  plan twice does not decay twice.
- `halflife` (the consolidation-science skill): weight × 0.5^(days / (30 + 335 · significance)),
  significance being the entry's importance: important memories fade over a year, trivia in a
  month.
  memtui's own method (`default`) uses it, from each entry's creation, in a store where no use
  was ever recorded (no access time, no access count: the Go system's own rule would take
  every importance to zero within a year), with the half-life ×2 for identity and preference
  facts (`SLOWER`): who a person is and what they like last longer than what happened.
- `ebbinghaus`: retention e^(-t/S) with stability S = S0 · (1 + accesses) days, t counted from
  the last access: each recall makes the memory last longer. (MemoryBank meant this but wrote
  `exp(-t / 5*S)`, which makes recalled memories fade *faster*.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memtui.engine.choices import DECAY_MODELS
from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.times import days_between, epoch_ms_float

MODELS = DECAY_MODELS
SLOWER: tuple[tuple[str, float], ...] = (("identity", 2.0), ("preference", 2.0))
"""The categories whose half-life is longer in a store where no use was ever recorded, and by
what factor (measured: bench/README.md#decay-when-no-use-was-ever-recorded)."""


@dataclass(frozen=True, slots=True)
class DecayModel:
    name: str
    rate: float = 0.95  # per-day factor (pi, longterm)
    stability_days: float = 5.0  # S0 (ebbinghaus)
    tenured_exempt: bool = True
    slower: tuple[tuple[str, float], ...] = ()
    """halflife: categories whose half-life is multiplied by a factor."""

    def half_life(self, memory: Memory) -> float:
        """The halflife model's half-life of this entry, in days."""
        factor = dict(self.slower).get(memory.category or "", 1.0)
        return (30.0 + 335.0 * memory.importance) * factor

    def anchor(self, memory: Memory) -> datetime | None:
        """The moment decay is counted from."""
        if self.name == "pi":
            return memory.last_decayed_at or memory.last_accessed_at or memory.created_at
        if self.name == "ebbinghaus":
            return memory.last_accessed_at or memory.created_at
        times = [
            t for t in (memory.created_at, memory.last_accessed_at, memory.last_decayed_at) if t
        ]
        return max(times) if times else None

    def exempt(self, memory: Memory) -> bool:
        return self.tenured_exempt and memory.tenured

    def _factor(self, memory: Memory, days: float) -> float:
        days = max(0.0, days)
        if self.name in ("pi", "longterm"):
            return float(self.rate**days)
        if self.name == "halflife":
            return float(0.5 ** (days / self.half_life(memory)))
        stability = self.stability_days * (1 + memory.access_count)
        return math.exp(-days / stability)

    def elapsed(self, memory: Memory, now: datetime) -> float:
        anchor = self.anchor(memory)
        if anchor is None:
            return 0.0
        if self.name == "pi":
            # pi's own arithmetic: (now − anchor) / 86400000 on epoch milliseconds
            return (epoch_ms_float(now) - epoch_ms_float(anchor)) / 86_400_000
        return days_between(anchor, now)

    def value_at(self, memory: Memory, now: datetime, day: float = 0.0) -> float:
        """Importance `day` days after `now` (day 0: what decay would set it to now)."""
        if self.exempt(memory):
            return memory.importance
        # elapsed counts from the model's anchor (ebbinghaus: the last access)
        return self.value_after(memory, self.elapsed(memory, now) + day)

    def value_after(self, memory: Memory, days: float) -> float:
        """Importance after `days` days counted from the model's anchor (not exempt)."""
        value = memory.importance * self._factor(memory, days)
        return max(0.0, min(1.0, value)) if self.name == "pi" else value

    def crossing_day(self, memory: Memory, now: datetime, line: float) -> float | None:
        """Days after `now` until the importance falls below `line`: 0 if it already has,
        None if it never will (tenured, or zero importance lines)."""
        if self.exempt(memory) or line <= 0:
            return None
        start = memory.importance
        if start < line:
            return 0.0
        elapsed = self.elapsed(memory, now)
        ratio = math.log(line / start)  # ≤ 0
        if self.name in ("pi", "longterm"):
            total = ratio / math.log(self.rate)
        elif self.name == "halflife":
            total = ratio / math.log(0.5) * self.half_life(memory)
        else:
            total = -ratio * self.stability_days * (1 + memory.access_count)
        return max(0.0, total - elapsed)


def model(
    name: str,
    rate: float | None = None,
    stability_days: float = 5.0,
    slower: tuple[tuple[str, float], ...] = (),
) -> DecayModel:
    if name not in MODELS:
        raise MemtuiError(f"unknown decay model {name!r} (use {', '.join(MODELS)})")
    default_rate = {"pi": 0.95, "longterm": 0.995}.get(name, 1.0)
    return DecayModel(
        name, rate if rate is not None else default_rate, stability_days, slower=slower
    )


class DecayChoices(Protocol):
    """What a profile says about decay (engine/profiles.py `Profile`): this module needs no
    more of it, and does not import it."""

    @property
    def decay_model(self) -> str | None: ...

    @property
    def decay_rate(self) -> float | None: ...

    @property
    def decays_unused_by_half_life(self) -> bool: ...


def decay_for(profile: DecayChoices, name: str | None = None) -> DecayModel | None:
    """The profile's decay model at the profile's rate (None when it has none), or the model
    `name` at that model's own default rate."""
    if name:
        return model(name)
    return model(profile.decay_model, profile.decay_rate) if profile.decay_model else None


def never_used(memories: Sequence[Memory]) -> bool:
    """Whether no entry has a recorded use (no access time, no access count)."""
    return not any(m.last_accessed_at is not None or m.access_count for m in memories)


def decay_for_store(profile: DecayChoices, memories: Sequence[Memory]) -> DecayModel | None:
    """The profile's decay model for this store: memtui's own method decays a store where no
    use was ever recorded with the half-life from creation, slower for lasting facts."""
    decay = decay_for(profile)
    if decay is None or not profile.decays_unused_by_half_life or not never_used(memories):
        return decay
    return DecayModel("halflife", 1.0, slower=SLOWER)


def slower_from(raw: object) -> tuple[tuple[str, float], ...] | None:
    """A plan's `decay_slower` parameter as a model takes it (None when it is malformed)."""
    if raw is None:
        return ()
    if not isinstance(raw, dict):
        return None
    out = []
    for category, factor in raw.items():
        if not isinstance(factor, int | float) or isinstance(factor, bool) or factor <= 0:
            return None
        out.append((str(category), float(factor)))
    return tuple(out)
