"""A realistic store to explore memtui on: several users, English and Chinese, near-duplicate
groups, superseded chains, an earlier merge, tenured, user-sourced, fresh and long-unused
entries. Deterministic for a given size, seed and `now`.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from functools import cache
from importlib import resources

from memtui.demo.curated import CHAINS, TOPICS, Chain
from memtui.model import Memory, Source, Status
from memtui.times import to_epoch_ms

DEFAULT_SIZE = 400
NAMED_USERS = ("alice", "bob", "chen.wei", "dana", "li.na", "sam")
PERSONA_CATEGORIES = ("preference", "fact", "fact", "identity", "episodic", "lesson")


@cache
def _lines(name: str) -> tuple[str, ...]:
    text = resources.files("memtui.demo").joinpath("text", name).read_text(encoding="utf-8")
    return tuple(line for line in text.splitlines() if line.strip())


def _users(size: int) -> list[str]:
    extra = max(0, size // 250 - len(NAMED_USERS))
    return [*NAMED_USERS, *(f"user-{n:04d}" for n in range(1, extra + 1))]


class _Maker:
    def __init__(self, rng: random.Random, now: datetime) -> None:
        self.rng = rng
        self.now = now
        self.serial = 0

    def new_id(self, created: datetime) -> str:
        self.serial += 1
        return f"m_{to_epoch_ms(created):x}_{self.rng.getrandbits(24):06x}"

    def memory(
        self,
        content: str,
        category: str,
        user: str,
        *,
        tags: tuple[str, ...] = (),
        paths: tuple[str, ...] = (),
        age_days: float | None = None,
    ) -> Memory:
        rng = self.rng
        kind = rng.random()
        age = age_days if age_days is not None else rng.uniform(1, 180)
        created = self.now - timedelta(days=age, seconds=rng.randrange(86400))
        if kind < 0.06:  # fresh: written in the last day, not used yet
            created = self.now - timedelta(minutes=rng.randrange(10, 1440))
            used, accesses, importance = created, 0, 0.8
        elif kind < 0.18:  # long unused: nobody recalled it for months
            created = self.now - timedelta(days=rng.uniform(95, 240))
            used = created + timedelta(days=rng.uniform(0, 5))
            accesses, importance = rng.randrange(0, 3), round(rng.uniform(0.08, 0.3), 3)
        else:
            span = (self.now - created).total_seconds()
            used = created + timedelta(seconds=rng.uniform(0.3, 1.0) * span)
            accesses = int(rng.paretovariate(1.3)) - 1 + rng.randrange(0, 12)
            idle = (self.now - used).days
            importance = round(max(0.1, min(1.0, rng.uniform(0.6, 0.95) * 0.98**idle)), 3)
        roll = rng.random()
        source = Source.USER if roll < 0.08 else Source.MANUAL if roll < 0.28 else Source.AUTO
        if source is Source.USER:
            importance = max(importance, 0.9)
        tenured = accesses >= 50
        return Memory(
            id=self.new_id(created),
            content=content,
            category=category,
            importance=1.0 if tenured else importance,
            source=source,
            tags=tags,
            paths=paths,
            created_at=created,
            last_accessed_at=used,
            last_decayed_at=used,
            access_count=accesses,
            evidence_count=rng.choice((None, None, 1, 2, 3)),
            tenured=tenured,
            user_id=user,
        )


def make_demo_memories(size: int, seed: int, now: datetime) -> list[Memory]:
    if size < 1:
        raise ValueError("size must be at least 1")
    rng = random.Random(seed)
    make = _Maker(rng, now)
    users = _users(size)
    out: list[Memory] = []

    for chain in CHAINS:
        user = rng.choice(NAMED_USERS)
        out.extend(_chain(make, chain, user))
    out.extend(_earlier_merge(make, rng.choice(NAMED_USERS)))

    topics = list(TOPICS)
    rng.shuffle(topics)
    for topic in topics:
        user = rng.choice(NAMED_USERS)
        count = rng.randint(1, len(topic.wordings))
        for wording in rng.sample(topic.wordings, count):
            out.append(
                make.memory(wording, topic.category, user, tags=topic.tags, paths=topic.paths)
            )

    english, chinese = _lines("personas_en.txt"), _lines("utterances_zh.txt")
    while len(out) < size:
        user = rng.choice(users)
        content = rng.choice(chinese) if rng.random() < 0.22 else rng.choice(english)
        category = rng.choice(PERSONA_CATEGORIES)
        out.append(make.memory(content, category, user))
        if rng.random() < 0.04 and len(out) < size:  # the agent wrote it again in another session
            out.append(make.memory(_restate(content, rng), category, user))
    del out[size:]
    rng.shuffle(out)
    return out


def _restate(content: str, rng: random.Random) -> str:
    if content.isascii():
        prefix = rng.choice(("User said: ", "Noted again: ", "The user mentioned that ", ""))
        body = content[0].lower() + content[1:] if prefix.endswith("that ") else content
        return prefix + body
    return rng.choice(("用户提到：", "用户又说：", "")) + content


def _chain(make: _Maker, chain: Chain, user: str) -> list[Memory]:
    ages = sorted((make.rng.uniform(20, 200) for _ in chain.wordings), reverse=True)
    members = [
        make.memory(text, chain.category, user, tags=chain.tags, age_days=age)
        for text, age in zip(chain.wordings, ages, strict=True)
    ]
    linked = []
    for i, m in enumerate(members):
        nxt = members[i + 1] if i + 1 < len(members) else None
        prev = members[i - 1] if i > 0 else None
        linked.append(
            m.with_(
                status=Status.SUPERSEDED if nxt else Status.ACTIVE,
                superseded_by=nxt.id if nxt else None,
                superseded_at=nxt.created_at if nxt else None,
                supersedes=(prev.id,) if prev else (),
                extra={"supersede_reason": chain.reasons[i]} if nxt else {},
            )
        )
    return linked


def _earlier_merge(make: _Maker, user: str) -> list[Memory]:
    """Two entries that an earlier consolidation merged into one (both kept, restorable)."""
    a = make.memory("User deploys on Fridays only after 2pm", "preference", user, age_days=60)
    b = make.memory(
        "No Friday deploys before 14:00, says the user", "preference", user, age_days=45
    )
    merged = make.memory(
        "User allows Friday deploys only after 14:00", "preference", user, age_days=30
    ).with_(supersedes=(a.id, b.id), importance=max(a.importance, b.importance))
    when = merged.created_at or make.now
    # members written before the merge (the merge may have drawn the "long unused" age): the
    # members move back, the merged entry (the one plans see) stays as drawn
    a, b = (
        m
        if (m.created_at or when) < when
        else m.with_(
            created_at=when - timedelta(days=days),
            last_accessed_at=when - timedelta(days=days - 1),
            last_decayed_at=when - timedelta(days=days - 1),
        )
        for m, days in ((a, 20), (b, 12))
    )
    return [
        a.with_(status=Status.MERGED, superseded_by=merged.id, superseded_at=when),
        b.with_(status=Status.MERGED, superseded_by=merged.id, superseded_at=when),
        merged,
    ]
