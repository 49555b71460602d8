"""Draw candidate pairs for the labelled calibration set, and build the set from the worksheet.

    python scripts/calibration_candidates.py candidates spc [--seed 7] [--per-method 60]
    python scripts/calibration_candidates.py candidates mb-cn|mb-en [--user NAME]
    python scripts/calibration_candidates.py build

`candidates` prints pairs drawn four ways, each independent of any similarity method memtui
ships: same topic by a keyword list, high character n-gram overlap, high word overlap, and
random pairs. A person reads them and writes user stores into the worksheet
(tests/fixtures/calibration/worksheet.txt); the labels are that person's judgement.

`build` turns the worksheet into facts.jsonl and pairs.jsonl, checking that every text is
verbatim from the data (a whole persona line, or a substring of one user utterance).
Deterministic: the unrelated pairs it samples come from a fixed seed.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/shared/data/text")
OUT = ROOT / "tests" / "fixtures" / "calibration"
SPC_FILE = "spc_persona_sets_valid_test.jsonl"
MB_FILES = {"mb-cn": "memory_bank_cn.json", "mb-en": "memory_bank_en.json"}
SEED = 7

# Topic keywords used only to draw same-topic candidates (never to decide a label).
EN_TOPICS: dict[str, tuple[str, ...]] = {
    "pets": ("dog", "cat", "pet", "horse", "fish", "turtle", "animal", "puppy"),
    "diet": ("vegan", "vegetarian", "meat", "eat", "food", "diet", "cook", "bake", "pizza"),
    "family": ("married", "kids", "children", "child", "wife", "husband", "sister", "brother"),
    "parents": ("mother", "father", "mom", "dad", "parents"),
    "work": ("work", "job", "nurse", "teacher", "doctor", "retired", "career"),
    "school": ("school", "college", "university", "graduate", "student", "study"),
    "music": ("music", "band", "sing", "guitar", "piano", "song", "concert"),
    "sport": ("run", "gym", "sport", "soccer", "football", "hike", "hiking", "swim", "walk"),
    "age": ("years old", "year old", "age", "old"),
    "place": ("live", "grew up", "born", "moved", "from"),
    "reading": ("read", "book", "novel", "poetry"),
    "travel": ("travel", "trip", "vacation", "visit"),
    "fear": ("afraid", "scared", "terrified", "fear", "allergic", "allergy"),
    "looks": ("hair", "eyes", "tall", "skinny", "weight"),
    "cars": ("car", "drive", "truck", "mustang"),
    "faith": ("church", "god", "christian", "jewish", "religious", "catholic"),
    "color": ("color", "colour"),
}
ZH_TOPICS: dict[str, tuple[str, ...]] = {
    "cooking": ("做菜", "菜", "做饭", "烹饪", "食谱", "菜谱", "厨"),
    "sport": (
        "跑步",
        "慢跑",
        "健身",
        "攀岩",
        "徒步",
        "游泳",
        "羽毛球",
        "篮球",
        "运动",
        "爬山",
        "登山",
    ),
    "film": ("电影", "影片", "电视剧"),
    "reading": ("书", "小说", "阅读", "读"),
    "travel": ("旅游", "旅行", "去过", "景点"),
    "work": ("工作", "职业", "公司", "上司", "老板", "面试"),
    "music": ("音乐", "歌", "吉他", "钢琴", "演唱会"),
    "photo": ("摄影", "拍照", "照片", "拍摄"),
    "art": ("绘画", "画", "写作", "诗"),
    "mood": ("压力", "焦虑", "孤独", "疲", "累", "沮丧"),
    "study": ("学习", "编程", "语言", "英语"),
}
_STOP_WORDS = (
    "i a an the and or but my me am is are was were to of in on at for with it its that this "
    "i'm be have has do not so as from by very also just like love really"
)
EN_STOP = set(_STOP_WORDS.split())


def spc_facts(data: Path) -> dict[str, str]:
    """Each distinct persona line -> where it first occurs."""
    where: dict[str, str] = {}
    with (data / SPC_FILE).open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            row = json.loads(line)
            for i, text in enumerate(row["personas"]):
                where.setdefault(
                    text,
                    f"{SPC_FILE} line {n} ({row['split']}, conv_index {row['conv_index']}, "
                    f"user {row['user']}), persona {i}",
                )
    return where


def mb_utterances(data: Path, corpus: str) -> dict[str, list[tuple[str, str]]]:
    """User name -> [(location, utterance)] for every user query in a MemoryBank file."""
    raw = json.loads((data / MB_FILES[corpus]).read_text(encoding="utf-8"))
    out: dict[str, list[tuple[str, str]]] = {}
    for name, user in raw.items():
        rows = out.setdefault(name.strip(), [])
        for day, turns in user["history"].items():
            for i, turn in enumerate(turns):
                rows.append(
                    (
                        f"{MB_FILES[corpus]} user {name.strip()!r}, {day}, turn {i} query",
                        turn["query"],
                    )
                )
    return out


def words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in EN_STOP}


def grams(text: str, n: int) -> set[str]:
    t = re.sub(r"\s+", " ", text.lower())
    return {t[i : i + n] for i in range(max(1, len(t) - n + 1))}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def topics(text: str, table: dict[str, tuple[str, ...]]) -> set[str]:
    low = text.lower()
    if table is EN_TOPICS:
        toks = " " + " ".join(re.findall(r"[a-z0-9]+", low)) + " "
        return {t for t, keys in table.items() if any(f" {k}" in toks for k in keys)}
    return {t for t, keys in table.items() if any(k in low for k in keys)}


def draw(texts: list[str], zh: bool, per_method: int, seed: int) -> list[tuple[str, str, str]]:
    """(method, a, b) candidate pairs, `per_method` from each of the four ways."""
    rng = random.Random(seed)
    table = ZH_TOPICS if zh else EN_TOPICS
    n = 2 if zh else 3
    g = [grams(t, n) for t in texts]
    w = [grams(t, 1) if zh else words(t) for t in texts]
    tp = [topics(t, table) for t in texts]
    pairs = list(itertools.combinations(range(len(texts)), 2))
    char = sorted(pairs, key=lambda p: -jaccard(g[p[0]], g[p[1]]))[:per_method]
    word = sorted(pairs, key=lambda p: -jaccard(w[p[0]], w[p[1]]))[:per_method]
    same = [p for p in pairs if tp[p[0]] & tp[p[1]]]
    topic = rng.sample(same, min(per_method, len(same)))
    rand = rng.sample(pairs, min(per_method, len(pairs)))
    out = []
    for method, chosen in (("char", char), ("word", word), ("topic", topic), ("random", rand)):
        out += [(method, texts[a], texts[b]) for a, b in chosen]
    return out


def cmd_candidates(args: argparse.Namespace) -> None:
    data = Path(args.data)
    if args.corpus == "spc":
        texts = sorted(spc_facts(data))
        cands = draw(texts, False, args.per_method, args.seed)
    else:
        users = mb_utterances(data, args.corpus)
        names = [args.user] if args.user else sorted(users)
        cands = []
        for name in names:
            texts = [u for _, u in users[name]]
            cands += draw(texts, args.corpus == "mb-cn", args.per_method, args.seed)
    for method, a, b in cands:
        print(f"{method}\t{a}\t{b}")


# --- build ---------------------------------------------------------------------------------


@dataclass
class Group:
    key: str
    kind: str
    topics: set[str]
    members: list[tuple[str, int]] = field(default_factory=list)  # (text, detail level)


@dataclass
class UserStore:
    key: str
    lang: str
    split: str
    source: str
    groups: list[Group] = field(default_factory=list)
    conflicts: set[frozenset[str]] = field(default_factory=set)


POSITIVE_KINDS = {"restatement", "refinement", "same-fact"}


def parse_worksheet(path: Path) -> list[UserStore]:
    users: list[UserStore] = []
    group: Group | None = None
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name}:{n}"
        if line.startswith("@user "):
            parts = line.split()
            opts = dict(p.split("=", 1) for p in parts[2:])
            users.append(UserStore(parts[1], opts["lang"], opts["split"], opts["source"]))
            group = None
        elif line.startswith("== "):
            parts = line[3:].split()
            kind = parts[1] if len(parts) > 1 else "single"
            if kind not in POSITIVE_KINDS | {"single"}:
                sys.exit(f"{where}: unknown group kind {kind!r}")
            tps = set(parts[2].split(",")) if len(parts) > 2 else set()
            group = Group(parts[0], kind, tps)
            users[-1].groups.append(group)
        elif line.startswith("!! "):
            a, b = line[3:].split()
            users[-1].conflicts.add(frozenset((a, b)))
        else:
            if group is None:
                sys.exit(f"{where}: text outside a group")
            text = line.lstrip("+")
            group.members.append((text.strip(), len(line) - len(text)))
    return users


def locate(store: UserStore, text: str, spc: dict[str, str], mb: dict) -> str:
    if store.source == "spc":
        if text not in spc:
            sys.exit(f"{store.key}: not a persona line: {text!r}")
        return spc[text]
    corpus, name = store.source.split(":", 1)
    for loc, utt in mb[corpus][name]:
        if text == utt:
            return loc
        if text in utt:
            return loc + " (trimmed)"
    sys.exit(f"{store.key}: not in {name}'s utterances: {text!r}")


def negative_kind(store: UserStore, g1: Group, g2: Group) -> str:
    if frozenset((g1.key, g2.key)) in store.conflicts:
        return "contradiction"
    return "same-topic" if g1.topics & g2.topics else "unrelated"


def cmd_build(args: argparse.Namespace) -> None:
    data = Path(args.data)
    stores = parse_worksheet(OUT / "worksheet.txt")
    spc = spc_facts(data)
    mb = {c: mb_utterances(data, c) for c in MB_FILES}
    rng = random.Random(args.seed)
    facts: list[dict] = []
    pairs: list[dict] = []
    for store in stores:
        keys = [g.key for g in store.groups]
        if len(set(keys)) != len(keys):
            sys.exit(f"{store.key}: duplicate group key")
        for a, b in store.conflicts:
            if a not in keys or b not in keys:
                sys.exit(f"{store.key}: conflict names an unknown group {a} / {b}")
        ids: list[tuple[str, Group, int]] = []
        seen: set[str] = set()
        for g in store.groups:
            if g.kind == "single" and len(g.members) != 1:
                sys.exit(f"{store.key}/{g.key}: a group of {len(g.members)} needs a kind")
            for text, detail in g.members:
                if text in seen:
                    sys.exit(f"{store.key}: text twice: {text!r}")
                seen.add(text)
                fid = f"{store.key}-{len(ids) + 1:02d}"
                ids.append((fid, g, detail))
                facts.append(
                    {
                        "id": fid,
                        "lang": store.lang,
                        "user": store.key,
                        "text": text,
                        "group": f"{store.key}/{g.key}",
                        "split": store.split,
                        "source": locate(store, text, spc, mb),
                    }
                )
        unrelated: list[dict] = []
        positives = 0
        for (ia, ga, da), (ib, gb, db) in itertools.combinations(ids, 2):
            pair = {"a": ia, "b": ib, "lang": store.lang, "split": store.split}
            if ga is gb:
                kind = "refinement" if da != db else ga.kind
                pairs.append({**pair, "label": 1, "kind": kind})
                positives += 1
                continue
            kind = negative_kind(store, ga, gb)
            row = {**pair, "label": 0, "kind": kind}
            (unrelated if kind == "unrelated" else pairs).append(row)
        pairs += rng.sample(unrelated, min(len(unrelated), max(args.min_unrelated, positives)))
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rows in (("facts.jsonl", facts), ("pairs.jsonl", pairs)):
        with (OUT / name).open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(facts)} facts, {len(stores)} users, {len(pairs)} pairs")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--data", default=str(DATA))
    p.add_argument("--seed", type=int, default=SEED)
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("candidates")
    c.add_argument("corpus", choices=["spc", *MB_FILES])
    c.add_argument("--user")
    c.add_argument("--per-method", type=int, default=60)
    c.set_defaults(func=cmd_candidates)
    b = sub.add_parser("build")
    b.add_argument("--min-unrelated", type=int, default=6)
    b.set_defaults(func=cmd_build)
    args = p.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
