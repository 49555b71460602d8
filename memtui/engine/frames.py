"""One frame, another value: "I live in Colorado." / "I live in Alaska."; "Sunny likes singing."
/ "Sunny likes dancing."; 我喜欢潜水 / 我喜欢滑雪; "I have a pet fish." / "I have a pet turtle.".

Two texts that say the same words up to a short stretch where each says something else (a
value of one attribute: a place, a hobby, a pet, a colour) are two facts of one kind — two
subjects of one person, or a contradiction for a person to decide — not one entry. The shared
start must hold the subject and its verb (two words, three CJK characters), so complementary
facts of one subject ("Frank likes rock climbing." / "Frank is learning rock climbing.") are
not caught. A synonym in the same place ("scared" / "afraid") is caught too: on words alone
nothing tells it from a value (with embeddings the first tier finds such restatements).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from memtui.engine.lexical import NUMBER_WORDS, SAME_WORD, stem

_TOKEN = re.compile(r"[\u3400-\u9fff]|[^\W_]+")
_ZH_DIGITS = dict(zip("一二两三四五六七八九十", "1223456789X", strict=True))
_MAX_SLOT = 3  # words (CJK: characters + 1) each side may differ in
_START_WORDS = 2
_START_CJK = 3


@lru_cache(maxsize=65536)
def frame_tokens(text: str) -> tuple[str, ...]:
    """The text as a sequence of comparable tokens: English words lower-cased, stemmed and with
    like/love/enjoy… as one; CJK characters one by one; numbers as digits."""
    out = []
    for token in _TOKEN.findall(text.lower()):
        if len(token) == 1 and "\u3400" <= token <= "\u9fff":
            out.append(_ZH_DIGITS.get(token, token))
        elif token in NUMBER_WORDS:
            out.append(NUMBER_WORDS[token])
        else:
            stemmed = stem(token)
            out.append(SAME_WORD.get(stemmed, stemmed))
    return tuple(out)


def _cjk(token: str) -> bool:
    return len(token) == 1 and "\u3400" <= token <= "\u9fff"


def _start(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The shared start two texts must have for the rule to look at them."""
    size = _START_CJK if tokens and _cjk(tokens[0]) else _START_WORDS
    return tokens[:size] if len(tokens) > size else ()


def frames_differ(a: str, b: str) -> bool:
    """Whether two texts are one frame with another value (see the module's description)."""
    x, y = frame_tokens(a), frame_tokens(b)
    start = _start(x)
    return bool(start) and start == _start(y) and _one_slot(x, y)


@lru_cache(maxsize=1 << 18)
def _one_slot(x: tuple[str, ...], y: tuple[str, ...]) -> bool:
    """Two token sequences with the same start: alike but for one short stretch each?"""
    limit = _MAX_SLOT + 1 if _cjk(x[0]) else _MAX_SLOT
    if abs(len(x) - len(y)) >= limit:
        return False
    lead = 0
    while lead < min(len(x), len(y)) and x[lead] == y[lead]:
        lead += 1
    tail = 0
    while tail < min(len(x), len(y)) - lead and x[-1 - tail] == y[-1 - tail]:
        tail += 1
    mx, my = x[lead : len(x) - tail], y[lead : len(y) - tail]
    if not mx or not my or len(mx) > limit or len(my) > limit or set(mx) & set(my):
        return False
    # numbers that differ are the numbers guard's (a conflict to decide), not this rule's
    return not (all(t.isdigit() for t in mx) and all(t.isdigit() for t in my))


def frames_apart(texts: Sequence[str]) -> np.ndarray:
    """`frames_differ` of every pair of these texts (a boolean matrix); only texts with the
    same start are compared."""
    out = np.zeros((len(texts), len(texts)), dtype=bool)
    by_start: dict[tuple[str, ...], list[int]] = {}
    tokens = [frame_tokens(text) for text in texts]
    for n, x in enumerate(tokens):
        start = _start(x)
        if start:
            by_start.setdefault(start, []).append(n)
    for members in by_start.values():
        for k, n in enumerate(members):
            x = tokens[n]
            for m in members[k + 1 :]:
                if _one_slot(x, tokens[m]):
                    out[n, m] = out[m, n] = True
    return out
