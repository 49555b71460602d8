"""How good are the proposals? Pairwise precision / recall / F1 of every profile on the labelled
calibration set (tests/fixtures/calibration), in one run.

    python bench/quality_bench.py [--split dev|test|both] [--sweep] [--variants]

1. Pair classification at each profile's merge line, on the labelled pairs (pairs.jsonl):
   pi rules (pi ≥ 0.3), longterm rules (tf-cosine ≥ 0.8), thesearch rules (0.4·jaro-winkler
   of titles + 0.6·cosine > 0.9), default (memtui lexical ≥ its merge line; idf over the user's
   store).
2. Grouping: each split's user stores planned with each profile; a pair of facts of one user is
   "proposed together" when one merge/absorb chain joins them. Pairwise P/R/F1 against the gold
   groups (facts.jsonl), over every within-user pair.
3. False-merge rate on PAWS-X (../shared/data/pairs/PAWS-X_dev_2k.tsv, hard Chinese
   non-paraphrases with high word overlap) at default's merge line: label-0 pairs scoring ≥ the
   line / all label-0 pairs (idf over the whole file, as one store).
4. `--sweep`: memtui merge lines 0.20–0.90 on the DEV split (grouping and pairs); the line to use
   is the best grouping F1 at precision ≥ 0.8. The test split is reported at that line only.
5. `--variants`: the measured design choices (linkage; CJK unigrams; stemming; stopwords) on DEV.
6. `--embed`: `default` with local sentence embeddings (memtui[embed]) in the grouping table
   (P/R/F1 per split and language); `--embed-sweep`: the embedding floor and merge line on DEV,
   beside the weighted means of the two scores that lost to the max (engine/embedded.py).
7. `--timing`: planning time (in process, the engine only) of `default` and `longterm` on demo
   stores of 10,000 entries of one user and 100,000 entries of 100 users.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from unittest.mock import patch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.demo import make_demo_memories
from memtui.engine import candidates, embedded, lexical
from memtui.engine.candidates import memtui_vectors
from memtui.engine.clusters import UnionFind
from memtui.engine.embedded import Embeddings
from memtui.engine.lexical import vector_cosine
from memtui.engine.planner import make_plan
from memtui.engine.profiles import Profile, get_profile
from memtui.engine.similarity import jaro_winkler, pi_similarity, tf_cosine
from memtui.model import Memory
from tests.consolidation_set import Counts as Scores

CALIBRATION = ROOT / "tests" / "fixtures" / "calibration"
PAWS = ROOT.parent / "shared" / "data" / "pairs" / "PAWS-X_dev_2k.tsv"
NOW = datetime(2026, 11, 30, tzinfo=UTC)
PROFILES = ("pi", "longterm", "thesearch", "default")
CJK_CHAR = re.compile(f"[{lexical._CJK}]")
LINES = [step / 20 for step in range(4, 19)]


@dataclasses.dataclass(frozen=True)
class Fact:
    id: str
    user: str
    text: str
    group: str
    split: str
    lang: str


def load_facts(folder: Path) -> list[Fact]:
    out = []
    for line in (folder / "facts.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out.append(Fact(r["id"], r["user"], r["text"], r["group"], r["split"], r["lang"]))
    return out


def load_pairs(folder: Path) -> list[dict[str, object]]:
    lines = (folder / "pairs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def memories(facts: Sequence[Fact]) -> list[Memory]:
    """The facts as a store: fresh, unremarkable entries (so only similarity decides)."""
    when = NOW - timedelta(hours=1)
    return [
        Memory(
            id=f.id,
            content=f.text,
            importance=0.5,
            user_id=f.user,
            created_at=when,
            last_accessed_at=when,
            last_decayed_at=when,
        )
        for f in facts
    ]


def profile(name: str, **changes: object) -> Profile:
    return dataclasses.replace(get_profile(name), **changes)  # type: ignore[arg-type]


# -- pairs ------------------------------------------------------------------------------------


def pair_scorer(name: str, facts: Sequence[Fact]) -> Callable[[Fact, Fact], float]:
    """The score a profile's merge decision compares with its line."""
    if name == "pi":
        return lambda a, b: pi_similarity(a.text, b.text)
    if name == "longterm":
        return lambda a, b: tf_cosine(a.text, b.text)
    if name == "thesearch":
        return lambda a, b: (
            0.4 * jaro_winkler(a.text[:80], b.text[:80]) + 0.6 * tf_cosine(a.text, b.text)
        )
    vectors = dict(zip((f.id for f in facts), memtui_vectors(memories(facts)), strict=True))
    return lambda a, b: vector_cosine(vectors[a.id], vectors[b.id])


def merge_line(name: str) -> tuple[float, bool]:
    """(line, strictly above?) of a profile's merge decision."""
    p = get_profile(name)
    if name == "thesearch":
        return p.thesearch_merge_score, True
    assert p.merge_threshold is not None
    return p.merge_threshold, False


def classify(
    pairs: Sequence[dict[str, object]],
    facts: dict[str, Fact],
    scorer: Callable[[Fact, Fact], float],
    line: float,
    strict: bool = False,
) -> Scores:
    tp = fp = fn = 0
    for p in pairs:
        score = scorer(facts[str(p["a"])], facts[str(p["b"])])
        said = score > line if strict else score >= line
        gold = p["label"] == 1
        tp += said and gold
        fp += said and not gold
        fn += gold and not said
    return Scores(tp, fp, fn)


# -- grouping ---------------------------------------------------------------------------------


def proposed_groups(
    facts: Sequence[Fact], chosen: Profile, vectors: Embeddings | None = None
) -> dict[str, str]:
    """Fact id → the root of the merge/absorb chain that takes it in (itself if none)."""
    plan = make_plan(memories(facts), chosen, NOW, store_format="native", embeddings=vectors)
    uf = UnionFind()
    for action in plan.actions:
        # this set labels "the same memory": the check of that tier (one subject's facts
        # are measured on tests/fixtures/consolidation, bench/consolidation_bench.py)
        if action.details.get("tier") == "subject":
            continue
        if action.kind in ("merge", "absorb") and not action.needs_decision:
            for other in action.targets[1:]:
                uf.union(action.targets[0], other)
    return {f.id: uf.find(f.id) for f in facts}


def grouping(facts: Sequence[Fact], chosen: Profile, vectors: Embeddings | None = None) -> Scores:
    found = proposed_groups(facts, chosen, vectors)
    by_user: dict[str, list[Fact]] = defaultdict(list)
    for f in facts:
        by_user[f.user].append(f)
    tp = fp = fn = 0
    for members in by_user.values():
        for a, b in combinations(members, 2):
            said = found[a.id] == found[b.id]
            gold = a.group == b.group
            tp += said and gold
            fp += said and not gold
            fn += gold and not said
    return Scores(tp, fp, fn)


# -- PAWS-X -----------------------------------------------------------------------------------


def paws_rows() -> list[tuple[str, str, int]]:
    rows = []
    for line_text in PAWS.read_text(encoding="utf-8").splitlines()[1:]:
        parts = line_text.split("\t")
        if len(parts) == 4 and parts[3] in ("0", "1") and "NS" not in (parts[1], parts[2]):
            rows.append((parts[1], parts[2], int(parts[3])))
    return rows


_PAWS_VECTORS: list[Embeddings] = []


def paws_false_merge_rate(line: float, embed: bool = False) -> tuple[int, int, int, int]:
    """(label-0 pairs ≥ line, label-0 pairs, label-1 pairs ≥ line, label-1 pairs); `embed`:
    the combined score with the installed model's embeddings (computed once per run)."""
    rows = paws_rows()
    store = [
        Memory(id=f"{n}{side}", content=t)
        for n, r in enumerate(rows)
        for side, t in (("a", r[0]), ("b", r[1]))
    ]
    vectors = memtui_vectors(store)
    entries: list[tuple[str, object] | None] = [None] * len(store)
    if embed:
        if not _PAWS_VECTORS:
            from memtui.embedding import load_embedder

            embedder = load_embedder()
            rows_v = embedder.embed([m.content for m in store])
            _PAWS_VECTORS.append(
                Embeddings(embedder.name, {m.id: v for m, v in zip(store, rows_v, strict=True)})
            )
        entries = embedded.entry_vectors(store, _PAWS_VECTORS[0])  # type: ignore[assignment]
    neg = neg_hit = pos = pos_hit = 0
    for n, (_, _, label) in enumerate(rows):
        score = vector_cosine(vectors[2 * n], vectors[2 * n + 1])
        cosine = embedded.reference_cosine(entries[2 * n], entries[2 * n + 1])  # type: ignore[arg-type]
        hit = embedded.combined(score, cosine) >= line
        if label:
            pos, pos_hit = pos + 1, pos_hit + hit
        else:
            neg, neg_hit = neg + 1, neg_hit + hit
    return neg_hit, neg, pos_hit, pos


# -- variants of the method (measured, to justify the choices) --------------------------------


@contextmanager
def tokens_variant(name: str) -> Iterator[None]:
    base = lexical.content_tokens.__wrapped__  # the uncached function

    def with_unigrams(text: str) -> tuple[str, ...]:
        extra = [ch for ch in CJK_CHAR.findall(text) if ch not in lexical.STOP_ZH_CHARS]
        return (*base(text), *extra)

    def no_stem(text: str) -> tuple[str, ...]:
        with patch.object(lexical, "stem", lambda w: w):
            return base(text)

    def no_stopwords(text: str) -> tuple[str, ...]:
        with (
            patch.object(lexical, "STOP_EN", frozenset()),
            patch.object(lexical, "STOP_ZH", frozenset()),
            patch.object(lexical, "STOP_ZH_CHARS", frozenset()),
        ):
            return base(text)

    chosen = {"cjk-unigrams": with_unigrams, "no-stemming": no_stem, "no-stopwords": no_stopwords}
    if name not in chosen:
        yield
        return
    with patch.object(lexical, "content_tokens", chosen[name]):
        yield


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sweep", action="store_true", help="memtui merge lines on dev")
    parser.add_argument("--variants", action="store_true", help="design choices on dev")
    parser.add_argument("--timing", action="store_true", help="planning time at 10k and 100k")
    parser.add_argument("--embed", action="store_true", help="default with embeddings too")
    parser.add_argument("--embed-sweep", action="store_true", help="embedding floor/line on dev")
    parser.add_argument("--chinese", action="store_true", help="Chinese on words: variants")
    parser.add_argument("--data", type=Path, default=CALIBRATION, help="the labelled set's folder")
    args = parser.parse_args()
    if not (args.data / "pairs.jsonl").exists():
        sys.exit(f"no labelled set at {args.data} (facts.jsonl, pairs.jsonl)")
    facts = load_facts(args.data)
    by_id = {f.id: f for f in facts}
    pairs = load_pairs(args.data)
    splits = {
        s: ([f for f in facts if f.split == s], [p for p in pairs if p["split"] == s])
        for s in ("dev", "test")
    }
    print(
        f"labelled set: {len(facts)} facts of {len({f.user for f in facts})} users, "
        f"{len(pairs)} pairs ({sum(p['label'] == 1 for p in pairs)} positive)"
    )

    print("\n1. pair classification at each profile's merge line (labelled pairs)")
    for split, (split_facts, split_pairs) in splits.items():
        for name in PROFILES:
            line, strict = merge_line(name)
            s = classify(split_pairs, by_id, pair_scorer(name, split_facts), line, strict)
            print(f"   {split:<5} {name:<10} line {line:<5g} {s.row()}")

    print("\n2. grouping: pairwise P/R of 'proposed together' after planning each user store")
    for split, (split_facts, _) in splits.items():
        for name in PROFILES:
            s = grouping(split_facts, get_profile(name))
            print(f"   {split:<5} {name:<10} {s.row()}  (tp {s.tp}, fp {s.fp}, fn {s.fn})")
        for lang in ("en", "zh"):  # every user store is in one language
            s = grouping([f for f in split_facts if f.lang == lang], get_profile("default"))
            print(f"   {split:<5} default {lang}  {s.row()}  (tp {s.tp}, fp {s.fp}, fn {s.fn})")

    vectors = fact_embeddings(facts) if args.embed or args.embed_sweep else None
    if args.embed and vectors is not None:
        print(f"\n2b. grouping of default with embeddings ({vectors.model})")
        for split, (split_facts, _) in splits.items():
            s = grouping(split_facts, get_profile("default"), vectors)
            print(f"   {split:<5} default+embed {s.row()}  (tp {s.tp}, fp {s.fp}, fn {s.fn})")
            for lang in ("en", "zh"):
                chosen = [f for f in split_facts if f.lang == lang]
                s = grouping(chosen, get_profile("default"), vectors)
                print(f"   {split:<5} default+embed {lang}  {s.row()}  (tp {s.tp}, fp {s.fp})")

    line = merge_line("default")[0]
    neg_hit, neg, pos_hit, pos = paws_false_merge_rate(line)
    print(
        f"\n3. PAWS-X at default's merge line {line:g}: false-merge rate {neg_hit / neg:.3f} "
        f"({neg_hit} of {neg} non-paraphrases); paraphrases reaching it {pos_hit / pos:.3f} "
        f"({pos_hit} of {pos})"
    )
    if vectors is not None:
        neg_hit, neg, pos_hit, pos = paws_false_merge_rate(line, embed=True)
        print(
            f"   with embeddings: false-merge rate {neg_hit / neg:.3f} ({neg_hit} of {neg}); "
            f"paraphrases reaching it {pos_hit / pos:.3f} ({pos_hit} of {pos})"
        )

    if args.sweep:
        dev_facts, dev_pairs = splits["dev"]
        test_facts, test_pairs = splits["test"]
        print("\n4. memtui merge line sweep on DEV (grouping; pair classification at the line)")
        scorer = pair_scorer("default", dev_facts)
        sweep = []
        for t in LINES:
            g = grouping(dev_facts, profile("default", merge_threshold=t))
            c = classify(dev_pairs, by_id, scorer, t)
            sweep.append((t, g))
            print(f"   {t:4.2f}  grouping {g.row()}   pairs {c.row()}")
        t, g = best_line(sweep)
        test = grouping(test_facts, profile("default", merge_threshold=t))
        pairs_test = classify(test_pairs, by_id, pair_scorer("default", test_facts), t)
        print(f"   chosen on dev: line {t:g} (best grouping F1 at precision ≥ 0.8: {g.row()})")
        print(f"   test at that line: grouping {test.row()}   pairs {pairs_test.row()}")

    if args.variants:
        dev_facts, _ = splits["dev"]
        print("\n5. design choices on DEV: the best grouping F1 at precision ≥ 0.8 over the lines")
        for linkage in ("average", "complete", "single"):
            sweep = [
                (t, grouping(dev_facts, profile("default", merge_threshold=t, linkage=linkage)))
                for t in LINES
            ]
            t, g = best_line(sweep)
            print(f"   linkage {linkage:<13} line {t:4.2f}  {g.row()}")
        for variant in ("cjk-unigrams", "no-stemming", "no-stopwords"):
            with tokens_variant(variant):
                sweep = [
                    (t, grouping(dev_facts, profile("default", merge_threshold=t))) for t in LINES
                ]
            t, g = best_line(sweep)
            print(f"   tokens  {variant:<13} line {t:4.2f}  {g.row()}")

    if args.embed_sweep and vectors is not None:
        embed_sweep(splits["dev"][0], splits["test"][0], vectors)

    if args.chinese:
        chinese_variants(splits["dev"][0], splits["test"][0])

    if args.timing:
        print("\n6. planning time (engine only, demo stores)")
        for size, users in ((10_000, 1), (100_000, 100)):
            demo = make_demo_memories(size, 11, NOW)
            demo = [m.with_(user_id=f"user-{i % users:03d}") for i, m in enumerate(demo)]
            for name in ("default", "longterm"):
                start = time.perf_counter()
                plan = make_plan(demo, get_profile(name), NOW)
                seconds = time.perf_counter() - start
                print(
                    f"   {size:>7,} entries, {users:>3} users  {name:<9} {seconds:6.2f}s  "
                    f"{plan.summary}"
                )


def fact_embeddings(facts: Sequence[Fact]) -> Embeddings | None:
    """Every fact's vector from the installed model (None, said, without the extra)."""
    from memtui.embedding import EmbeddingsUnavailable, load_embedder

    try:
        embedder = load_embedder()
    except EmbeddingsUnavailable as e:
        print(e)
        return None
    start = time.perf_counter()
    rows = embedder.embed([f.text for f in facts])
    seconds = time.perf_counter() - start
    print(f"   embedded {len(facts)} facts with {embedder.name} in {seconds:.2f}s")
    return Embeddings(embedder.name, dict(zip((f.id for f in facts), rows, strict=True)))


def embed_sweep(dev: Sequence[Fact], test: Sequence[Fact], vectors: Embeddings) -> None:
    """The floors that map cosines onto the lexical scale (general, then CJK), the merge line,
    and the ways of combining the two scores, all chosen on DEV."""
    print("\n4b. embeddings: floor × merge line on DEV (best grouping F1 at precision ≥ 0.8)")
    results = []
    for floor in (0.4, 0.45, 0.5, 0.55, 0.6, 0.7):
        with patch.object(embedded, "EMBED_FLOOR", floor):
            sweep = [
                (t, grouping(dev, profile("default", merge_threshold=t), vectors)) for t in LINES
            ]
        t, g = best_line(sweep)
        results.append((floor, t, g))
        print(f"   floor {floor:4.2f}  line {t:4.2f}  {g.row()}")
    fit = [r for r in results if r[2].precision >= 0.8] or results
    floor, t, g = max(fit, key=lambda r: (r[2].f1, r[0]))
    with patch.object(embedded, "EMBED_FLOOR", floor):
        s = grouping(test, profile("default", merge_threshold=t), vectors)
    print(f"   chosen on dev: floor {floor:g}, line {t:g}; test there: {s.row()}")

    line = merge_line("default")[0]
    dev_zh, test_zh = [f for f in dev if f.lang == "zh"], [f for f in test if f.lang == "zh"]
    print(
        "\n4c. the floor for two CJK texts on DEV Chinese (precision ≥ 0.8, best F1; ties: the "
        f"fewest PAWS-X false merges at {line:g})"
    )
    rows = []
    for floor in (0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        with patch.object(embedded, "EMBED_FLOOR_CJK", floor):
            g = grouping(dev_zh, get_profile("default"), vectors)
            neg_hit, neg, _, _ = paws_false_merge_rate(line, embed=True)
        rows.append((floor, g, neg_hit / neg))
        print(f"   CJK floor {floor:4.2f}  dev zh {g.row()} (tp {g.tp}, fp {g.fp})  "
              f"PAWS-X false merges {neg_hit / neg:.3f}")  # fmt: skip
    fit = [r for r in rows if r[1].precision >= 0.8] or rows
    floor = max(fit, key=lambda r: (round(r[1].f1, 9), -r[2]))[0]
    with patch.object(embedded, "EMBED_FLOOR_CJK", floor):
        s = grouping(test_zh, get_profile("default"), vectors)
    print(f"   chosen on dev: CJK floor {floor:g}; test zh there: {s.row()} (tp {s.tp}, fp {s.fp})")

    print(f"\n4d. combining words and meaning (grouping; PAWS-X false merges at {line:g})")
    options = {
        "max, one floor for all": {"EMBED_FLOOR_CJK": embedded.EMBED_FLOOR},
        "max, CJK floor (used)": {"EMBED_FLOOR_CJK": embedded.EMBED_FLOOR_CJK},
        "words must reach 0.2": {"LEXICAL_SUPPORT": 0.2},
        "words must reach 0.3": {"LEXICAL_SUPPORT": 0.3},
        "half the lift": {"MEANING_SHARE": 0.5},
        "half the lift, one floor": {"MEANING_SHARE": 0.5, "EMBED_FLOOR_CJK": embedded.EMBED_FLOOR},
        "words alone": {"MEANING_SHARE": 0.0},
    }
    for name, changes in options.items():
        with patch.multiple(embedded, **changes):  # type: ignore[arg-type]
            d = grouping(dev, get_profile("default"), vectors)
            t_ = grouping(test, get_profile("default"), vectors)
            neg_hit, neg, pos_hit, pos = paws_false_merge_rate(line, embed=True)
        print(f"   {name:<26} dev {d.row()}  test {t_.row()}  PAWS-X false merges "
              f"{neg_hit / neg:.3f}, paraphrases {pos_hit / pos:.3f}")  # fmt: skip


def chinese_variants(dev: Sequence[Fact], test: Sequence[Fact]) -> None:
    """Ways to find Chinese restatements on words alone, measured (none used: docs/design.md)."""
    line = merge_line("default")[0]
    print(
        "\n5b. Chinese on words: CJK tokens × a lift of CJK scores (cos' = k + (1 − k)·cos, "
        "one shared vector component); chosen on DEV, precision ≥ 0.8 in each language"
    )
    split_sets = {
        "dev zh": [f for f in dev if f.lang == "zh"],
        "test zh": [f for f in test if f.lang == "zh"],
        "dev": list(dev),
        "test": list(test),
    }
    for variant in ("bigrams", "cjk-unigrams"):
        for k in (0.0, 0.15, 0.25, 0.3, 0.35, 0.4):
            with tokens_variant(variant), cjk_lift(k):
                scores = {n: grouping(fs, get_profile("default")) for n, fs in split_sets.items()}
                neg_hit, neg, _, _ = paws_false_merge_rate(line)
            cells = "  ".join(
                f"{n} P {s.precision:5.3f} R {s.recall:5.3f}" for n, s in scores.items()
            )
            print(f"   {variant:<12} k {k:4.2f}  {cells}  PAWS-X {neg_hit / neg:.3f}")


@contextmanager
def cjk_lift(k: float) -> Iterator[None]:
    """Every mostly-CJK vector gets one shared component of weight √k (the rest scaled by
    √(1 − k)): two CJK texts then score k + (1 − k)·cos, a per-language rescaling that the
    exact candidate search supports as it is."""
    if k == 0.0:
        yield
        return
    original = lexical.lexical_vectors

    def lifted(texts: Sequence[str]) -> list[lexical.Vector]:
        out = []
        for text, v in zip(texts, original(texts), strict=True):
            if v and lexical.mostly_cjk(text):
                scale = math.sqrt(1.0 - k)
                v = {**{t: w * scale for t, w in v.items()}, "\x00cjk": math.sqrt(k)}
            out.append(v)
        return out

    with (
        patch.object(lexical, "lexical_vectors", lifted),
        patch.object(candidates, "lexical_vectors", lifted),
    ):
        yield


def best_line(sweep: Sequence[tuple[float, Scores]]) -> tuple[float, Scores]:
    """The line with the best F1 among those with precision ≥ 0.8 (else the most precise)."""
    good = [(t, s) for t, s in sweep if s.precision >= 0.8]
    if not good:
        return max(sweep, key=lambda x: (x[1].precision, x[1].f1))
    return max(good, key=lambda x: (x[1].f1, -x[0]))


if __name__ == "__main__":
    main()
