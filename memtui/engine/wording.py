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

from memtui.engine.lexical import content_tokens, surface_words
from memtui.engine.subjects import chinese_name
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


def missing_words(text: str, merged: str) -> list[str]:
    """The words of `text` that `merged` does not say (surface words; a CJK bigram is said
    when each of its characters is), in order."""
    covered = surface_words(merged)
    chars = set(merged)
    return [t for t in sorted(surface_words(text)) if t not in covered and not _said(t, chars)]


def _said(token: str, chars: set[str]) -> bool:
    return _is_cjk(token[0]) and set(token) <= chars


def rule_wording(members: Sequence[Memory], max_chars: int) -> Wording:
    """The merged text of `members` (see the module's description). A clause under a
    labelled line of a member ("**Why:** …", as Claude Code's feedback memories have) joins
    the text's line of that label, or starts one; every other clause joins the text's opening
    part (all of it when the text has no labelled lines)."""
    ranked = sorted(members, key=_rank, reverse=True)
    base = ranked[0]
    text = base.content.strip()
    out = Wording(text, base.id, [(0, len(text), base.id)])
    covered = set(surface_words(text))
    seen_chars = set(text)
    for member in ranked[1:]:
        for label, clause in _labelled_clauses(member.content):
            new = [
                t
                for t in sorted(surface_words(clause))
                if t not in covered and not (_is_cjk(t[0]) and set(t) <= seen_chars)
            ]
            if not new:
                continue
            at, piece = _placed(text, label, clause)
            if len(text) + len(piece) > max_chars:
                out.left_out.append({"member": member.id, "clause": clause, "words": new})
                continue
            text = _insert(text, out.spans, at, piece, clause, member.id)
            out.added.append({"member": member.id, "clause": clause, "words": new})
            covered.update(new)
            seen_chars.update(clause)
    out.text = text
    return out


_LABEL = re.compile(r"^\*\*[^*\n]{1,40}:\*\*", re.M)


def _labelled_clauses(text: str) -> list[tuple[str, str]]:
    """The clauses of `text`, each with the label of the line it is under ("" before any)."""
    out: list[tuple[str, str]] = []
    starts = [(m.start(), m.end()) for m in _LABEL.finditer(text)]
    lead_end = starts[0][0] if starts else len(text)
    out.extend(("", c) for c in clauses(text[:lead_end]))
    for n, (start, end) in enumerate(starts):
        stop = starts[n + 1][0] if n + 1 < len(starts) else len(text)
        out.extend((text[start:end], c) for c in clauses(text[end:stop]))
    return out


def _section_end(text: str, label: str) -> int | None:
    """Where a clause under `label` joins `text`: the end of the words of that label's part
    (the opening part for ""), or None when the text has no such part."""
    found = list(_LABEL.finditer(text))
    if not label:
        end = len(text[: found[0].start() if found else len(text)].rstrip())
        return end or None
    key = label.lower()
    at = next((n for n, m in enumerate(found) if m.group().lower() == key), None)
    if at is None:
        return None
    return len(text[: found[at + 1].start() if at + 1 < len(found) else len(text)].rstrip())


def _placed(text: str, label: str, clause: str) -> tuple[int, str]:
    """Where a clause under `label` goes in `text`, and the clause as it goes there (with
    what joins it): the end of that label's part, or a line of its own at the end."""
    at = _section_end(text, label)
    if at is None:
        return len(text), f"\n{label} {clause}" if label else f"\n{clause}"
    return at, _joiner(text[:at], clause) + clause


def _insert(
    text: str, spans: list[tuple[int, int, str]], at: int, piece: str, clause: str, ident: str
) -> str:
    """`text` with `piece` (ending in `clause`, of `ident`) inserted at `at`; the spans after
    it moved (and the one it falls in split), the clause's own span added."""
    size = len(piece)
    moved: list[tuple[int, int, str]] = []
    for start, end, who in spans:
        if end <= at:
            moved.append((start, end, who))
        elif start >= at:
            moved.append((start + size, end + size, who))
        else:
            moved += [(start, at, who), (at + size, end + size, who)]
    moved.append((at + size - len(clause), at + size, ident))
    spans[:] = sorted(moved)
    return text[:at] + piece + text[at:]


_LEAD_EN = re.compile(r"^(?:I|User|(?:My|Our) [a-z]+|[A-Z][a-z]+(?: [A-Z][a-z]+)?)(?= [a-z])")
_LEAD_ZH = re.compile(
    r"^(?:我的?(?:妈妈|爸爸|姐姐|妹妹|哥哥|弟弟|老公|老婆|朋友|孩子)|我|用户)(?![们的])"
)


def _lead(text: str) -> str:
    """The subject words a text starts with ("Emily", "I", "My sister", 我, 用户, 张伟), or
    ""."""
    if _is_cjk(text[:1]):
        found = _LEAD_ZH.match(text)
        if found:
            return found.group()
        name = chinese_name(text)
        return name if name and text[len(name) : len(name) + 1] not in ("的", "们") else ""
    found = _LEAD_EN.match(text)
    return found.group() if found else ""


def _rest(clause: str, lead: str) -> str | None:
    """`clause` without its leading subject `lead` (None: it does not start with it)."""
    if not lead or not clause.startswith(lead) or len(clause) <= len(lead):
        return None
    after = clause[len(lead) :]
    if _is_cjk(lead[:1]):
        if after[:1] in ("的", "们"):
            return None
    elif not after.startswith(" ") or not after[1:2].islower():
        return None  # "Emily's …", "I'm …": another subject, or a clause that needs it
    return after.strip().rstrip(_SENTENCE_END + ";；,，") or None


def subject_wording(members: Sequence[Memory], max_chars: int) -> Wording | None:
    """The merged text of one subject's facts, in the members' order: the first member, then
    every clause of the others that says something not yet said (surface words). Clauses that
    start with the first member's subject join its sentence without repeating it ("Emily
    works as a nurse, works night shifts and has been nursing for ten years."; 我喜欢画画，最近在学
    油画); others follow as sentences. None when every fact does not fit in `max_chars`."""
    base = members[0]
    first = base.content.strip()
    lead = _lead(first) if len(clauses(first)) == 1 else ""
    joined: list[tuple[str, str]] = []  # (member id, what it adds to the first sentence)
    after: list[tuple[str, str, str]] = []  # (member id, its label, a sentence of its own)
    added: list[dict[str, Any]] = []
    out: Wording | None = Wording(first, base.id, [(0, len(first), base.id)])
    for member in members[1:]:
        for label, clause in _labelled_clauses(member.content):
            assert out is not None
            new = missing_words(clause, out.text)
            if not new:
                continue
            rest = None if label else _rest(clause, lead)
            if rest is not None:
                joined.append((member.id, rest))
            else:
                after.append((member.id, label, clause))
            added.append({"member": member.id, "clause": clause, "words": new})
            out = _assemble(base.id, first, joined, after)
            if len(out.text) > max_chars:
                return None
    assert out is not None
    out.added = added
    return out


def _assemble(
    base: str, first: str, joined: list[tuple[str, str]], after: list[tuple[str, str, str]]
) -> Wording:
    spans: list[tuple[int, int, str]] = []
    end = first[-1] if first[-1] in _SENTENCE_END else ""
    text = first[: len(first) - len(end)] if joined else first
    spans.append((0, len(text), base))
    cjk = _is_cjk(first[:1])
    # parts that hold commas of their own are set apart by semicolons
    listed = [text, *(rest for _, rest in joined)]
    long = any(("，" in part) if cjk else ("," in part or " and " in part) for part in listed)
    for n, (ident, rest) in enumerate(joined):
        if cjk:
            glue = "；" if long else "，"
        else:
            glue = "; " if long else (" and " if n == len(joined) - 1 else ", ")
        text += glue
        spans.append((len(text), len(text) + len(rest), ident))
        text += rest
    if joined and end:
        spans.append((len(text), len(text) + len(end), base))
        text += end
    for ident, label, clause in after:
        at, piece = _placed(text, label, clause)
        text = _insert(text, spans, at, piece, clause, ident)
    return Wording(text, base, spans)
