"""Whether two entries about one subject give different values of one attribute: the conflicts
memtui's own method proposes (a pair that merely scores in a band is not one).

- numbers: one thing counted with different numbers ("I have two dogs" / "Three dogs live
  with me"; `lexical.numbers_in`), not two things ("two dogs" / "one cat");
- negation: one says it, the other says it is not so, the rest alike ("likes tea" / "doesn't
  like tea", "hates tea"; "是" / "不是", "喜欢" / "不喜欢");
- value: one slot holds a different value, the rest alike — a name on each side ("works with
  Anna" / "works with Maria"), or what follows "is", "am", "lives in", "is from", … ("my
  favourite colour is green" / "… is purple", "I live in Ohio" / "I live in Texas"). A
  difference in the first word is a different subject ("Caroline …" / "Melanie …"), never a
  conflict.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import combinations

from memtui.engine.lexical import NUMBER_WORDS, numbers_in
from memtui.model import Memory

ALIKE = 0.8
"""How alike the rest of two texts must be (difflib ratio over their words)."""
_MAX_SLOT = 3  # words a differing value may span
_MAX_SLOT_CJK = 4  # CJK characters

_WORD = re.compile(r"[\u3400-\u9fff]|[a-z0-9]+(?:'[a-z]+)?")
_CJK = re.compile(r"[\u3400-\u9fff]")
_CONTRACTIONS = {
    "n't": ["not"],
    "'m": ["am"],
    "'re": ["are"],
    "'s": [],
    "'ve": ["have"],
    "'ll": ["will"],
    "'d": ["would"],
}
_IRREGULAR_NOT = {"can't": ["can", "not"], "won't": ["will", "not"], "cannot": ["can", "not"]}
_SPELLING = {"favourite": "favorite", "colour": "color", "favourites": "favorite"}
_LIKING = {"love", "loves", "adore", "adores", "enjoy", "enjoys", "likes", "like"}
_DISLIKING = {"hate", "hates", "dislike", "dislikes", "detest", "detests"}
NEGATIONS = frozenset({"not", "never", "no", "不", "没", "未"})
_ZH_NOT_NEGATING = ("不错", "不过", "不断", "不少", "不同", "不久")
_AUXILIARIES = frozenset({"do", "does", "did"})
_ARTICLES = frozenset({"a", "an", "the", "my", "his", "her", "their", "our"})
_COPULAS = frozenset({"is", "are", "was", "were", "named", "called", "是", "叫"})
"""Before a value of an attribute that holds one ("my favourite colour is …"); not "am": a
person is many things ("I am a vegan" / "I am a librarian")."""
_LIVING = frozenset({"live", "lives", "lived", "living", "grew", "born", "raised", "住", "生"})
_COMING = _LIVING | {"am", "is", "are", "was", "come", "comes", "came"}
_ZH_DISLIKE = ("讨厌", "不喜欢")


def _tokens(text: str) -> tuple[str, ...]:
    """Lower-case words (CJK: characters), contractions and liking words spelled out."""
    lowered = text.lower().replace("’", "'").replace(_ZH_DISLIKE[0], _ZH_DISLIKE[1])
    for phrase in _ZH_NOT_NEGATING:
        lowered = lowered.replace(phrase, phrase[1] * 2)  # no negation in it
    out: list[str] = []
    for word in _WORD.findall(lowered):
        if word in _IRREGULAR_NOT:
            out += _IRREGULAR_NOT[word]
            continue
        base, tail = word, ""
        if "'" in word:
            base, tail = word[: word.index("'")], word[word.index("'") :]
            if tail == "'t" and base.endswith("n"):
                base, tail = base[:-1], "n't"
        if base in _LIKING:
            out.append("like")
        elif base in _DISLIKING:
            out += ["not", "like"]
        else:
            out.append(_SPELLING.get(base, base))
        out += _CONTRACTIONS.get(tail, [])
    return tuple(out)


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


@lru_cache(maxsize=65536)
def _read(text: str) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
    """The text's words, whether it negates, and its words without the negation."""
    words = _tokens(text)
    negated = sum(w in NEGATIONS for w in words) % 2 == 1
    plain = [w for w in words if w not in NEGATIONS]
    plain = [w for n, w in enumerate(plain) if not (w in _AUXILIARIES and n + 1 < len(plain))]
    return words, negated, tuple(_stem(w) for w in plain)


def _capitalised(text: str) -> set[str]:
    """The words written with a capital that do not start the text (names, places)."""
    found = re.findall(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]+", text.strip())
    return {w.lower() for w in found}


def _slot_cue(before: tuple[str, ...]) -> bool:
    """Whether the words before a value make it the one value of an attribute: a copula
    ("… is"), where one lives ("live in", "住在") or comes from ("am from", "来自")."""
    rest = [w for w in before if w != "up"]  # "grew up in"
    while rest and rest[-1] in _ARTICLES:
        rest.pop()
    if not rest:
        return False
    last, verb = rest[-1], rest[-2] if len(rest) > 1 else ""
    if (last in _COPULAS and len(rest) > 2) or (verb, last) == ("来", "自"):
        return True  # "my favourite colour is …", not "Tim is …": a person is many things
    return (last == "from" and verb in _COMING) or (last in ("in", "在") and verb in _LIVING)


def _one_short_replace(wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """Whether the texts could differ in one short span that is not their first word (what
    `_value_differs` looks for), told without difflib: a shared first word, and what the
    shared start and end leave of each at most as long as a value may be (and not nothing:
    the same words said again, most pairs at the merge line)."""
    if wa == wb:
        return False
    shortest = min(len(wa), len(wb))
    start = 0
    while start < shortest and wa[start] == wb[start]:
        start += 1
    if start == 0:
        return False
    end = 0
    while end < shortest and wa[-1 - end] == wb[-1 - end]:
        end += 1
    shared = min(start + end, shortest)
    return max(len(wa), len(wb)) - shared <= max(_MAX_SLOT, _MAX_SLOT_CJK)


def _value_differs(a: str, b: str, wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    return _one_short_replace(wa, wb) and _replaced_value(a, b, wa, wb)


def _replaced_value(a: str, b: str, wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """One short span of words replaced (difflib's opcodes): a name, or the value that ends
    both texts after a cue."""
    opcodes = [op for op in SequenceMatcher(None, wa, wb, autojunk=False).get_opcodes()]
    changed = [op for op in opcodes if op[0] != "equal"]
    if len(changed) != 1 or changed[0][0] != "replace":
        return False
    _, a0, a1, b0, b1 = changed[0]
    cjk = bool(_CJK.match(wa[a0]))
    limit = _MAX_SLOT_CJK if cjk else _MAX_SLOT
    if a0 == 0 or b0 == 0 or a1 - a0 > limit or b1 - b0 > limit:
        return False  # the subject differs, or more than one value
    shared = len(wa) - (a1 - a0)
    if shared < 2 or shared < 0.5 * max(len(wa), len(wb)):
        return False
    names_a, names_b = _capitalised(a), _capitalised(b)
    if names_a & set(wa[a0:a1]) and names_b & set(wb[b0:b1]):
        return True
    # otherwise only the value that ends both texts, after a cue that it holds one
    return a1 == len(wa) and b1 == len(wb) and _slot_cue(wa[:a0])


_UNITS = frozenset({"year", "month", "week", "day", "hour", "minute", "time"})
"""Counted words that count many things ("34 years old" / "for 12 years")."""
_NOT_NAMES = frozenset(
    [
        "i",
        "my",
        "me",
        "we",
        "our",
        "you",
        "your",
        "he",
        "his",
        "she",
        "her",
        "they",
        "their",
        "it",
        "its",
        "the",
        "a",
        "an",
        "this",
        "that",
        "there",
        "user",
    ]
)


@lru_cache(maxsize=16384)  # asked of each text of every pair at the merge line
def _subject(text: str) -> str | None:
    """The name a text starts with ("Caroline is …", "Ethan's mom …"), if any."""
    found = re.match(r"\s*([A-Z][a-z]+)", text)
    if found is None or found.group(1).lower() in _NOT_NAMES:
        return None
    return found.group(1).lower()


def _counted(words: tuple[str, ...]) -> dict[str, set[str]]:
    """Each counted word (the two after a number; the one before a number that ends the
    text) → the numbers it is counted with ("two large dogs": large, dog → 2)."""
    out: dict[str, set[str]] = {}
    for n, word in enumerate(words):
        value = word if word.isdigit() else NUMBER_WORDS.get(word)
        if value is None:
            continue
        after = [w for w in words[n + 1 : n + 3] if not w.isdigit() and w not in NUMBER_WORDS]
        for counted in after or list(words[max(0, n - 1) : n]):
            out.setdefault(_stem(counted), set()).add(value)
    return out


def _numbers_differ(wa: tuple[str, ...], wb: tuple[str, ...]) -> bool:
    """One thing counted with different numbers ("two dogs" / "three dogs")."""
    ca, cb = _counted(wa), _counted(wb)
    differ = [w for w in ca.keys() & cb.keys() if ca[w].isdisjoint(cb[w])]
    if any(w not in _UNITS for w in differ):
        return True
    if not differ:
        return False
    masked_a, masked_b = (tuple(w for w in ws if w not in ca[differ[0]]) for ws in (wa, wb))
    alike = SequenceMatcher(None, masked_a, masked_b, autojunk=False).ratio()
    return alike >= ALIKE  # "I am 24 years old" / "I am 40 years old", not "for 12 years"


def clash(a: str, b: str) -> str | None:
    """How two texts about one subject disagree ("numbers", "negation", "value"), or None."""
    who_a, who_b = _subject(a), _subject(b)
    if who_a is not None and who_b is not None and who_a != who_b:
        return None  # two people ("Anna has two dogs" / "Ben has three dogs")
    wa, neg_a, plain_a = _read(a)
    wb, neg_b, plain_b = _read(b)
    na, nb = numbers_in(a), numbers_in(b)
    if na and nb and na - nb and nb - na:
        return "numbers" if _numbers_differ(wa, wb) else None
    if neg_a != neg_b:
        ratio = SequenceMatcher(None, plain_a, plain_b, autojunk=False).ratio()
        return "negation" if ratio >= ALIKE else None
    if neg_a or na != nb:
        return None
    return "value" if _value_differs(a, b, wa, wb) else None


CLASH_WORDS = {
    "numbers": "state different numbers",
    "negation": "say it and its opposite",
    "value": "give different values in one place",
}
"""How a plan's reason says each kind of clash."""


BUCKET_CAP = 40
"""Entries sharing one frame past this many are left to the similarity search (a frame that
common says little)."""


def _frames(text: str) -> set[tuple[str, ...]]:
    """What a clash needs two texts to share: a thing counted ("n", "dog"), or the words
    before a value that ends the text after a cue ("v", "my", "favorite", "color", "is")."""
    words, _, _ = _read(text)
    out: set[tuple[str, ...]] = set()
    if numbers_in(text):
        out.update(("n", w) for w in _counted(words))
    for n in range(max(1, len(words) - _MAX_SLOT - 1), len(words)):
        if _slot_cue(words[:n]):
            out.add(("v", *words[:n]))
    return out


def clash_candidates(memories: Sequence[Memory]) -> list[tuple[str, str]]:
    """Pairs of one user's entries that may clash although they score low ("I have two dogs"
    / "Three dogs live with me"): those sharing a frame (`_frames`), once each."""
    return [pair for pair, _ in clash_candidates_placed(memories)]


def clash_candidates_placed(
    memories: Sequence[Memory],
) -> list[tuple[tuple[str, str], tuple[str, int, int]]]:
    """`clash_candidates`, each with where it comes in their order: the entry that opened
    its frame's bucket, the how-manieth bucket that entry opened, the pair's place in it."""
    buckets: dict[tuple[object, ...], list[str]] = defaultdict(list)
    opened: dict[tuple[object, ...], tuple[str, int]] = {}
    for m in memories:
        count = 0
        for frame in _frames(m.content):
            bucket = (m.user_id, *frame)
            if bucket not in buckets:
                opened[bucket] = (m.id, count)
                count += 1
            buckets[bucket].append(m.id)
    seen: set[tuple[str, str]] = set()
    out = []
    for key, members in buckets.items():
        if len(members) > BUCKET_CAP:
            continue
        for n, pair in enumerate(combinations(members, 2)):
            if pair not in seen:
                seen.add(pair)
                out.append((pair, (*opened[key], n)))
    return out
