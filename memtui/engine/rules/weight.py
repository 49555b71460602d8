"""thesearch's effective weight of an entry, which its merge, deprecate, promote and health
rules weigh with."""

from __future__ import annotations

import math
from datetime import datetime

from memtui.engine.decay import DecayModel
from memtui.model import Memory, Source


def effective_weight(memory: Memory, now: datetime, decay: DecayModel | None) -> float:
    """The skill's effective weight: confidence (importance), a bonus for entries a person
    wrote, usage, then half-life decay since last use."""
    source = {Source.USER: 1.2, Source.MANUAL: 1.1, Source.AUTO: 1.0}[memory.source]
    usage = 1.0 + 0.1 * math.log1p(memory.access_count)
    base = min(1.0, memory.importance * source * usage)
    if decay is None:
        return base
    return decay.value_at(memory.with_(importance=base), now)
