"""Similarity methods, each a score in [0, 1] for two texts (or two memories).

- `pi`: the pi agent's character-2-gram overlap coefficient, counted in UTF-16 code units as
  JavaScript does.
- `tf-cosine`: the Go long-term memory's term-frequency cosine (a CJK ideograph is one token,
  ASCII letter/digit runs are lowercased tokens, everything else separates); embedding cosine
  instead when both memories carry embeddings of the same length.
- `jaro-winkler`, `token-set`: rapidfuzz scorers on lowercased text (token-set on rapidfuzz's
  default processing: lowercase, non-alphanumerics as spaces).
- `memtui`: memtui's own IDF-weighted content-word cosine (engine/lexical.py); the idf comes
  from the entries compared, so two texts on their own are weighed against each other only.
"""

from __future__ import annotations

import math
import re
import sys
import unicodedata
from collections import Counter
from functools import cache
from itertools import pairwise

from rapidfuzz import fuzz, utils
from rapidfuzz.distance import JaroWinkler

from memtui.engine.choices import METHODS as _METHODS
from memtui.engine.lexical import memtui_similarity
from memtui.model import Memory

METHODS = _METHODS  # the names, as `engine.choices.Method` types them

# JavaScript's \s: what pi strips besides punctuation and symbols
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


@cache
def _pi_strip() -> re.Pattern[str]:
    """Every whitespace (as JS \\s), punctuation (P*) and symbol (S*) character."""
    ranges = []
    start = None
    category = unicodedata.category
    for code in range(sys.maxunicode + 1):
        hit = category(chr(code))[0] in "PS"
        if hit and start is None:
            start = code
        elif not hit and start is not None:
            ranges.append(f"{_esc(start)}-{_esc(code - 1)}")
            start = None
    return re.compile(f"[{_JS_SPACE}{''.join(ranges)}]+")


def _esc(code: int) -> str:
    return f"\\U{code:08x}"


def pi_normalise(text: str) -> str:
    return _pi_strip().sub("", text.lower())


def utf16_units(text: str) -> tuple[int, ...]:
    data = text.encode("utf-16-le", "surrogatepass")
    return tuple(int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2))


def pi_grams(normalised: str) -> frozenset[int]:
    """The set of UTF-16 code-unit 2-grams (a one-unit string is its own set)."""
    units = utf16_units(normalised) if not normalised.isascii() else tuple(map(ord, normalised))
    if len(units) < 2:
        return frozenset((1 << 32) | u for u in units)
    return frozenset((a << 16) | b for a, b in pairwise(units))


def utf16_length(text: str) -> int:
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def pi_similarity(a: str, b: str) -> float:
    """pi's `similarity()`, exactly: see the golden vectors in tests/fixtures."""
    na, nb = pi_normalise(a), pi_normalise(b)
    if na == nb:
        return 1.0 if na else 0.0
    if not na or not nb:
        return 0.0
    short, long = (na, nb) if utf16_length(na) <= utf16_length(nb) else (nb, na)
    if utf16_length(short) >= 6 and short in long:
        return 1.0
    ga, gb = pi_grams(na), pi_grams(nb)
    return len(ga & gb) / min(len(ga), len(gb))


_TF_TOKEN = re.compile(r"[\u4e00-\u9fff]|[A-Za-z0-9]+")


def tf_vector(text: str) -> Counter[str]:
    return Counter(map(str.lower, _TF_TOKEN.findall(text)))


def tf_norm2(v: Counter[str]) -> int:
    return sum(n * n for n in v.values())


def tf_cosine_vectors(va: Counter[str], vb: Counter[str]) -> float:
    if not va or not vb:
        return 0.0
    return tf_cosine_with_norms(va, vb, tf_norm2(va), tf_norm2(vb))


def tf_cosine_with_norms(va: Counter[str], vb: Counter[str], na: int, nb: int) -> float:
    """The cosine from integer counts and squared norms: exact dot products, so any caller
    that precomputes the norms gets the very same float."""
    dot = sum(va[t] * vb[t] for t in va.keys() & vb.keys())
    if not dot:
        return 0.0
    return dot / (math.sqrt(na) * math.sqrt(nb))


def tf_cosine(a: str, b: str) -> float:
    return tf_cosine_vectors(tf_vector(a), tf_vector(b))


def embedding_cosine(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.fsum(x * x for x in a)
    nb = math.fsum(y * y for y in b)
    if na == 0.0 or nb == 0.0:
        return 0.0
    return max(0.0, min(1.0, dot / (math.sqrt(na) * math.sqrt(nb))))


def jaro_winkler(a: str, b: str) -> float:
    return JaroWinkler.normalized_similarity(a.lower(), b.lower())


def token_set(a: str, b: str) -> float:
    return fuzz.token_set_ratio(a, b, processor=utils.default_process) / 100.0


_TEXT_SCORERS = {
    "pi": pi_similarity,
    "tf-cosine": tf_cosine,
    "jaro-winkler": jaro_winkler,
    "token-set": token_set,
    "memtui": memtui_similarity,
}


def check_method(method: str) -> str:
    if method not in _TEXT_SCORERS:
        from memtui.errors import MemtuiError

        raise MemtuiError(f"unknown similarity method {method!r} (use {', '.join(METHODS)})")
    return method


def text_similarity(a: str, b: str, method: str) -> float:
    return _TEXT_SCORERS[check_method(method)](a, b)


def memory_similarity(a: Memory, b: Memory, method: str) -> float:
    """The score of two memories; `tf-cosine` uses their embeddings when both have one of the
    same length."""
    if (
        method == "tf-cosine"
        and a.embedding is not None
        and b.embedding is not None
        and len(a.embedding) == len(b.embedding)
        and a.embedding
    ):
        return embedding_cosine(a.embedding, b.embedding)
    return text_similarity(a.content, b.content, method)
