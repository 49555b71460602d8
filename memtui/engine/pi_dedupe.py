"""pi's consolidator around the merges: how it takes a model's answer, and the dedupe it runs
over the whole store once something was merged (identical normalised content folds into the
most potent copy)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from memtui.engine.similarity import pi_normalise
from memtui.model import SOURCE_PRIORITY, Memory

# pi ignores merged wording shorter than this (trimmed) and cuts it at this many UTF-16 units
MIN_ANSWER_CHARS = 10
MAX_ANSWER_UNITS = 500
TENURE_ACCESSES = 50


def _js_trim(text: str) -> str:
    # JavaScript's trim: the same white space as its \s (Python's strip adds a few controls)
    return text.strip(
        "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
        "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
    )


def pi_answer(answer: str | None) -> str | None:
    """The merged wording pi keeps from a model's answer: None for a veto or an answer pi
    ignores (under 10 characters); cut at 500 UTF-16 units (which can split an emoji)."""
    if answer is None:
        return None
    text = _js_trim(answer)
    if len(text.encode("utf-16-le", "surrogatepass")) < 2 * MIN_ANSWER_CHARS:
        return None
    units = text.encode("utf-16-le", "surrogatepass")[: 2 * MAX_ANSWER_UNITS]
    return units.decode("utf-16-le", "surrogatepass")


# pi_normalise for ASCII text, without its regular expression: lower case, then drop white
# space (as JavaScript's \s), punctuation and symbols
_ASCII_DROPPED = str.maketrans(
    "",
    "",
    "".join(
        c for c in map(chr, range(128)) if unicodedata.category(c)[0] in "PS" or c in "\t\n\v\f\r "
    ),
)


def _normalised(text: str) -> str:
    return text.lower().translate(_ASCII_DROPPED) if text.isascii() else pi_normalise(text)


def pi_dedupe_groups(entries: Sequence[Memory]) -> list[tuple[str, list[str]]]:
    """(survivor, folded) per set of entries with identical normalised content, `entries` in
    file order: the survivor is the most potent (earlier in the file on ties); the folded
    ones in the order pi folds them (by potency, then file order)."""
    ranked = sorted(entries, key=lambda m: -m.importance)  # stable, as JavaScript's sort
    keeper: dict[str, str] = {}
    folded: dict[str, list[str]] = {}
    for memory in ranked:
        key = _normalised(memory.content)
        if key in keeper:
            folded.setdefault(keeper[key], []).append(memory.id)
        else:
            keeper[key] = memory.id
    position = {m.id: n for n, m in enumerate(entries)}
    return sorted(folded.items(), key=lambda item: position[item[0]])


def pi_fold(survivor: Memory, folded: Sequence[Memory]) -> Memory:
    """`survivor` after pi folded its twins into it, one by one."""
    kept = survivor
    for twin in folded:
        stronger = SOURCE_PRIORITY[twin.source] > SOURCE_PRIORITY[kept.source]
        preferred = twin if stronger else kept
        accesses = kept.access_count + twin.access_count
        session = preferred.extra.get("sourceSession")
        extra = dict(kept.extra)
        if session is not None:
            extra["sourceSession"] = session
        kept = kept.with_(
            paths=tuple(dict.fromkeys([*kept.paths, *twin.paths])),
            tags=tuple(dict.fromkeys([*kept.tags, *twin.tags])),
            importance=max(kept.importance, twin.importance),
            created_at=_earliest(kept.created_at, twin.created_at),
            last_accessed_at=_latest(kept.last_accessed_at, twin.last_accessed_at),
            last_decayed_at=_latest(
                kept.last_decayed_at or kept.last_accessed_at,
                twin.last_decayed_at or twin.last_accessed_at,
            ),
            access_count=accesses,
            evidence_count=max(kept.evidence_count or 1, twin.evidence_count or 1),
            tenured=kept.tenured or twin.tenured or accesses >= TENURE_ACCESSES,
            source=preferred.source,
            category=preferred.category,
            extra=extra,
        )
    return kept


def _earliest(a: object, b: object) -> object:
    present = [t for t in (a, b) if t is not None]
    return min(present) if present else None  # type: ignore[type-var]


def _latest(a: object, b: object) -> object:
    present = [t for t in (a, b) if t is not None]
    return max(present) if present else None  # type: ignore[type-var]
