"""Relative time words in an entry, resolved against the entry's own creation time.

"went to an adoption meeting last Friday" written on 2023-10-23 means 2023-10-20; the same
words written in July mean a day in July. A merged entry says the date ("on 2023-10-20"), so
it stays true whenever it is read; two entries whose time words point to different days are
two episodes, never one entry.

Resolved: today, tonight, this morning/afternoon/evening, yesterday (morning, …), last night,
the day before yesterday, tomorrow, the day after tomorrow, N days/weeks ago, last/this/next
<weekday>, week, weekend, month, year; 今天 今晚 昨天 昨晚 前天 明天 后天, 上周X 这周X 下周X (星期,
礼拜), 上周 这周 下周, 上周末 这个周末 下周末, 上个月 这个月 下个月, 去年 今年 明年. A week runs
Monday to Sunday; "last Friday" is the latest Friday before the day, "next Friday" the first
after it; 上周五 is the Friday of the week before.

Not resolvable: a bare weekday ("on Friday", 周五) and a bare 周末, whose direction the words do
not say, and any time word in an entry without a creation time. Entries with such words join
only entries created the same day (then the merged entry, created that day, still means it).
Habits ("every Friday", "on weekends", 每周末) are no time words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

import numpy as np

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_ZH_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_NUMBER = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip
_PREPOSITION = re.compile(r"\b(?:since|until|till|by|from|before|after|on|in|of|for)\s*$", re.I)

_EN = re.compile(
    r"\b(?:(?P<dby>the day before yesterday)|(?P<dat>the day after tomorrow)"
    r"|(?P<ago>(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
    r"(?P<unit>day|week|month|year)s?\s+ago)"
    r"|(?P<yd>yesterday)(?:\s+(?P<ydpart>morning|afternoon|evening|night))?"
    r"|(?P<lastnight>last night)|(?P<tonight>tonight)"
    r"|this\s+(?P<part>morning|afternoon|evening)"
    r"|(?P<today>today)|(?P<tomorrow>tomorrow)"
    r"|(?P<rel>last|this|next)\s+(?P<what>" + "|".join(_WEEKDAYS) + r"|weekend|week|month|year)\b"
    r"|(?P<bare>on\s+(?:" + "|".join(_WEEKDAYS) + r"))(?!s)\b)",
    re.IGNORECASE,
)
_ZH = re.compile(
    r"(?P<every>每个?(?:周末|周|星期|礼拜|月|年|天))"
    r"|(?P<zhday>前天|昨天|昨日|昨晚|今天|今日|今晚|今早|明天|明日|明晚|后天)"
    r"|(?P<zrel>上个?|这个?|本|下个?)(?P<zunit>周末|周|星期|礼拜)(?P<zwd>[一二三四五六日天])?"
    r"|(?P<zmonth>上个月|上月|这个月|本月|下个月|下月)"
    r"|(?P<zyear>去年|今年|明年)"
    r"|(?P<zbare>(?:周|星期|礼拜)[一二三四五六日天]|周末)"
)
_ZH_DAY = {
    "前天": (-2, ""), "昨天": (-1, ""), "昨日": (-1, ""), "昨晚": (-1, "晚上"),
    "今天": (0, ""), "今日": (0, ""), "今晚": (0, "晚上"), "今早": (0, "早上"),
    "明天": (1, ""), "明日": (1, ""), "明晚": (1, "晚上"), "后天": (2, ""),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TimeWord:
    start: int
    end: int
    first: date | None
    """The first day the words point to (None: not resolvable)."""
    last: date | None
    said: str | None
    """The words that say it as a date (None: not resolvable)."""


def _week_start(day: date) -> date:
    return day - timedelta(days=day.weekday())


def _month(day: date, step: int) -> tuple[date, date]:
    index = day.year * 12 + day.month - 1 + step
    first = date(index // 12, index % 12 + 1, 1)
    following = date((index + 1) // 12, (index + 1) % 12 + 1, 1)
    return first, following - timedelta(days=1)


def _iso(day: date) -> str:
    return day.isoformat()


def _zh_date(day: date) -> str:
    return f"{day.year}年{day.month}月{day.day}日"


@lru_cache(maxsize=65536)
def time_words(text: str, created: date | None) -> tuple[TimeWord, ...]:
    """The relative time words of `text`, each resolved against the day `created`."""
    found = [*_english(text, created), *_chinese(text, created)]
    return tuple(sorted(found, key=lambda w: w.start))


def _english(text: str, created: date | None) -> list[TimeWord]:
    out = []
    for m in _EN.finditer(text):
        if m.group("bare"):
            out.append(TimeWord(m.start(), m.end(), None, None, None))
            continue
        if created is None:
            out.append(TimeWord(m.start(), m.end(), None, None, None))
            continue
        span = _english_span(m, created)
        if span is None:
            out.append(TimeWord(m.start(), m.end(), None, None, None))
            continue
        first, last, prep, said = span
        before = text[: m.start()]
        after = text[m.end() :].lstrip()
        bare = _PREPOSITION.search(before) or re.match(r"(?:is|was|'s)\b", after, re.I)
        words = said if bare or not prep else f"{prep} {said}"
        if text[m.start()].isupper() and not bare:
            words = words[0].upper() + words[1:]
        out.append(TimeWord(m.start(), m.end(), first, last, words))
    return out


def _english_span(m: re.Match[str], d: date) -> tuple[date, date, str, str] | None:
    g = m.group
    one = timedelta(days=1)
    if g("dby"):
        return d - 2 * one, d - 2 * one, "on", _iso(d - 2 * one)
    if g("dat"):
        return d + 2 * one, d + 2 * one, "on", _iso(d + 2 * one)
    if g("ago"):
        count = g("ago").split()[0].lower()
        n = int(count) if count.isdigit() else _NUMBER[count]
        unit = g("unit").lower()
        if unit == "day":
            day = d - n * one
            return day, day, "on", _iso(day)
        if unit == "week":
            start = _week_start(d) - timedelta(weeks=n)
            return start, start + 6 * one, "in", f"the week of {_iso(start)}"
        if unit == "month":
            first, last = _month(d, -n)
            return first, last, "in", first.strftime("%Y-%m")
        return date(d.year - n, 1, 1), date(d.year - n, 12, 31), "in", str(d.year - n)
    if g("yd"):
        part = g("ydpart")
        said = f"the {part.lower()} of {_iso(d - one)}" if part else _iso(d - one)
        return d - one, d - one, "on", said
    if g("lastnight"):
        return d - one, d - one, "on", f"the night of {_iso(d - one)}"
    if g("tonight"):
        return d, d, "on", f"the evening of {_iso(d)}"
    if g("part"):
        return d, d, "on", f"the {g('part').lower()} of {_iso(d)}"
    if g("today"):
        return d, d, "on", _iso(d)
    if g("tomorrow"):
        return d + one, d + one, "on", _iso(d + one)
    rel, what = g("rel").lower(), g("what").lower()
    step = {"last": -1, "this": 0, "next": 1}[rel]
    if what in _WEEKDAYS:
        target = _WEEKDAYS.index(what)
        if rel == "this":
            day = _week_start(d) + timedelta(days=target)
        elif rel == "last":
            day = d - timedelta(days=(d.weekday() - target - 1) % 7 + 1)
        else:
            day = d + timedelta(days=(target - d.weekday() - 1) % 7 + 1)
        return day, day, "on", _iso(day)
    if what == "week":
        start = _week_start(d) + timedelta(weeks=step)
        return start, start + 6 * one, "in", f"the week of {_iso(start)}"
    if what == "weekend":
        saturday = _week_start(d) + timedelta(days=5, weeks=step)
        return saturday, saturday + one, "on", f"the weekend of {_iso(saturday)}"
    if what == "month":
        first, last = _month(d, step)
        return first, last, "in", first.strftime("%Y-%m")
    year = d.year + step
    return date(year, 1, 1), date(year, 12, 31), "in", str(year)


def _chinese(text: str, created: date | None) -> list[TimeWord]:
    out = []
    for m in _ZH.finditer(text):
        if m.group("every"):
            continue
        span = None if created is None or m.group("zbare") else _chinese_span(m, created)
        if span is None:
            out.append(TimeWord(m.start(), m.end(), None, None, None))
        else:
            out.append(TimeWord(m.start(), m.end(), *span))
    return out


def _chinese_span(m: re.Match[str], d: date) -> tuple[date, date, str] | None:
    one = timedelta(days=1)
    if m.group("zhday"):
        shift, part = _ZH_DAY[m.group("zhday")]
        day = d + shift * one
        return day, day, _zh_date(day) + part
    if m.group("zmonth"):
        word = m.group("zmonth")
        step = -1 if word.startswith("上") else (1 if word.startswith("下") else 0)
        first, last = _month(d, step)
        return first, last, f"{first.year}年{first.month}月"
    if m.group("zyear"):
        year = d.year + {"去年": -1, "今年": 0, "明年": 1}[m.group("zyear")]
        return date(year, 1, 1), date(year, 12, 31), f"{year}年"
    rel = m.group("zrel")
    step = -1 if rel.startswith("上") else (1 if rel.startswith("下") else 0)
    monday = _week_start(d) + timedelta(weeks=step)
    unit, weekday = m.group("zunit"), m.group("zwd")
    if unit == "周末":
        saturday = monday + 5 * one
        return saturday, saturday + one, f"{_zh_date(saturday)}那个周末"
    if weekday:
        day = monday + timedelta(days=_ZH_WEEKDAY[weekday])
        return day, day, _zh_date(day)
    return monday, monday + 6 * one, f"{_zh_date(monday)}那一周"


def _day(created: datetime | None) -> date | None:
    return created.date() if created is not None else None


def resolved(text: str, created: datetime | None) -> str:
    """`text` with each resolvable time word said as a date (unresolvable ones stay)."""
    words = time_words(text, _day(created))
    if not any(w.said for w in words):
        return text
    out, at = [], 0
    for w in words:
        if w.said is None or w.start < at:
            continue
        out.append(text[at : w.start])
        out.append(w.said)
        at = w.end
    out.append(text[at:])
    return "".join(out)


def has_time_words(text: str) -> bool:
    return bool(time_words(text, None))


def episodes_differ(a: str, made_a: datetime | None, b: str, made_b: datetime | None) -> bool:
    """`dates_apart` of one pair."""
    if not has_time_words(a) and not has_time_words(b):
        return False
    return bool(dates_apart([a, b], [made_a, made_b])[0, 1])


def dates_apart(texts: Sequence[str], created: Sequence[datetime | None]) -> np.ndarray:
    """Which pairs of these entries are separate episodes: their time words point to days
    that do not overlap, or one's cannot be resolved and they were not written the same day."""
    n = len(texts)
    out = np.zeros((n, n), dtype=bool)
    if not any(has_time_words(t) for t in texts):
        return out
    days = [_day(c) for c in created]
    words = [time_words(t, d) for t, d in zip(texts, days, strict=True)]
    timed = [k for k in range(n) if words[k]]
    if not timed:
        return out
    low = np.full(n, np.nan)
    high = np.full(n, np.nan)
    loose = np.zeros(n, dtype=bool)
    for k in timed:
        firsts = [w.first for w in words[k] if w.first is not None]
        lasts = [w.last for w in words[k] if w.last is not None]
        if len(firsts) < len(words[k]):
            loose[k] = True
        if firsts:
            low[k] = min(firsts).toordinal()
            high[k] = max(lasts).toordinal()
    written = np.array([d.toordinal() if d is not None else np.nan for d in days])
    with np.errstate(invalid="ignore"):
        separate = (low[:, None] > high[None, :]) | (high[:, None] < low[None, :])
        other_day = ~(written[:, None] == written[None, :])
    unsure = (loose[:, None] | loose[None, :]) & other_day
    out = np.asarray(separate | unsure, dtype=bool)
    np.fill_diagonal(out, False)
    return out
