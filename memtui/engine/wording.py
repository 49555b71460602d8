"""The merged wording of memtui's rule: the most complete member, plus only the clauses of the
others that say something it does not.

- base: the member whose content words cover most of the group's (ties: the user's wording,
  then the more important, then the newer);
- every other member, most complete first, is cut into clauses (sentences and `;` parts); a
  clause is added only when it brings content words not yet in the text (a CJK bigram counts
  as new only with a character the text lacks: "用户非常喜欢咖啡" already says "用户喜欢咖啡"),
  and only when the text stays within `max_chars`;
- nothing is ever cut short: a clause that does not fit is left out and reported.

`spans` say which member each stretch of the merged text came from (character offsets), for a
front end to show; `left_out` lists the clauses with new words that did not fit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from memtui.engine.lexical import content_tokens
from memtui.model import SOURCE_PRIORITY, Memory

_CLAUSE_END = re.compile(r"(?<=[.!?;。！？；])\s*|\n+")
_SENTENCE_END = ".!?。！？"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(slots=True)
class Wording:
    text: str
    base: str
    """The id of the member whose wording the text starts from."""
    spans: list[tuple[int, int, str]] = field(default_factory=list)
    """(start, end, member id) of each stretch of `text`."""
    added: list[dict[str, Any]] = field(default_factory=list)
    """Clauses taken from other members: member, clause, the new content words."""
    left_out: list[dict[str, Any]] = field(default_factory=list)
    """Clauses with new content words that would have made the text longer than the cap."""

    def provenance(self) -> dict[str, Any]:
        return {
            "base": self.base,
            "spans": [[start, end, ident] for start, end, ident in self.spans],
            "added": self.added,
            "left_out": self.left_out,
        }


def clauses(text: str) -> list[str]:
    return [c.strip() for c in _CLAUSE_END.split(text) if c and c.strip()]


def _is_cjk(ch: str) -> bool:
    return bool(ch) and ("\u3000" <= ch <= "\u9fff" or "\uf900" <= ch <= "\uffef" or ch > "\uffff")


def _joiner(text: str, clause: str) -> str:
    last = text[-1] if text else ""
    cjk = _is_cjk(last) or _is_cjk(clause[:1])
    if last in _SENTENCE_END or last in ";；":
        return "" if _is_cjk(last) else " "
    return "；" if cjk else "; "


def _rank(member: Memory) -> tuple[int, int, float, datetime]:
    words = len(set(content_tokens(member.content)))
    return (
        words,
        SOURCE_PRIORITY[member.source],
        member.importance,
        member.created_at or _EPOCH,
    )


def rule_wording(members: Sequence[Memory], max_chars: int) -> Wording:
    """The merged text of `members` (see the module's description)."""
    ranked = sorted(members, key=_rank, reverse=True)
    base = ranked[0]
    text = base.content.strip()
    out = Wording(text, base.id, [(0, len(text), base.id)])
    covered = set(content_tokens(text))
    seen_chars = set(text)
    for member in ranked[1:]:
        for clause in clauses(member.content):
            new = [
                t
                for t in dict.fromkeys(content_tokens(clause))
                if t not in covered and not (_is_cjk(t[0]) and set(t) <= seen_chars)
            ]
            if not new:
                continue
            joiner = _joiner(text, clause)
            if len(text) + len(joiner) + len(clause) > max_chars:
                out.left_out.append({"member": member.id, "clause": clause, "words": new})
                continue
            start = len(text) + len(joiner)
            text = f"{text}{joiner}{clause}"
            out.spans.append((start, len(text), member.id))
            out.added.append({"member": member.id, "clause": clause, "words": new})
            covered.update(new)
            seen_chars.update(clause)
    out.text = text
    return out
