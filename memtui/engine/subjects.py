"""Whom or what an entry is about: the subject guard of memtui's merges.

Two entries whose subjects differ never merge, in either tier: "Caroline is considering
adoption." / "Melanie is considering adoption herself."; "My sister is a doctor." / "My
brother is a doctor."; "我妈妈喜欢跳舞" / "我喜欢跳舞"; "张伟下周要考试" / "李雪下周要考试".

An entry's subject is the first reference it makes: the speaker ("I", 我), a relative or
person of the speaker's ("my sister", 我妈妈, 我的朋友; the same word in any form: mom = mother),
or a name (a capitalised word that acts as a subject or possessor, "Caroline …", "Anna's dog";
a Chinese name at the start of a third-person fact, surname + one or two characters). A name
in a text that also speaks of the speaker ("Miles Davis is my favourite.") is about the
speaker too. Pronouns (she, 他) and anything else leave the subject unknown: no guard.

Two entries are apart when both subjects are known, they share none, and neither names the
other's subject anywhere ("Emily has a cat named Mimi." / "Mimi is three years old." are one
subject: the first names Mimi).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

SELF = "self"


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_KIN_EN = {
    **dict.fromkeys(["mother", "mom", "mum", "mommy", "mummy", "mama", "momma"], "mother"),
    **dict.fromkeys(["father", "dad", "daddy", "papa", "pa"], "father"),
    **dict.fromkeys(["parents", "parent"], "parents"),
    **dict.fromkeys(["sister", "sisters", "sis"], "sister"),
    **dict.fromkeys(["brother", "brothers", "bro"], "brother"),
    **dict.fromkeys(["siblings", "sibling"], "siblings"),
    **dict.fromkeys(["wife"], "wife"),
    **dict.fromkeys(["husband", "hubby"], "husband"),
    **dict.fromkeys(["spouse", "partner"], "partner"),
    **dict.fromkeys(["son", "sons"], "son"),
    **dict.fromkeys(["daughter", "daughters"], "daughter"),
    **dict.fromkeys(["kids", "kid", "children", "child"], "children"),
    **dict.fromkeys(["grandmother", "grandma", "granny", "nana"], "grandmother"),
    **dict.fromkeys(["grandfather", "grandpa", "granddad"], "grandfather"),
    **dict.fromkeys(["grandparents"], "grandparents"),
    **dict.fromkeys(["aunt", "auntie", "aunts"], "aunt"),
    **dict.fromkeys(["uncle", "uncles"], "uncle"),
    **dict.fromkeys(["cousin", "cousins"], "cousin"),
    **dict.fromkeys(["niece"], "niece"),
    **dict.fromkeys(["nephew"], "nephew"),
    **dict.fromkeys(["boyfriend"], "boyfriend"),
    **dict.fromkeys(["girlfriend"], "girlfriend"),
    **dict.fromkeys(["fiance", "fiancé", "fiancee", "fiancée"], "fiance"),
    **dict.fromkeys(["friend", "friends"], "friend"),
    **dict.fromkeys(["roommate", "roommates", "flatmate"], "roommate"),
    **dict.fromkeys(["boss", "manager"], "boss"),
    **dict.fromkeys(["coworker", "coworkers", "colleague", "colleagues"], "colleague"),
    **dict.fromkeys(["neighbor", "neighbour", "neighbors", "neighbours"], "neighbour"),
    **dict.fromkeys(["teacher", "coach"], "teacher"),
}
_KIN_ZH = {
    **dict.fromkeys(["妈妈", "母亲", "老妈", "妈"], "mother"),
    **dict.fromkeys(["爸爸", "父亲", "老爸", "爸"], "father"),
    **dict.fromkeys(["父母", "爸妈"], "parents"),
    **dict.fromkeys(["姐姐", "姐"], "sister"),
    **dict.fromkeys(["妹妹", "妹"], "younger sister"),
    **dict.fromkeys(["哥哥", "哥"], "brother"),
    **dict.fromkeys(["弟弟", "弟"], "younger brother"),
    **dict.fromkeys(["老婆", "妻子", "太太", "爱人"], "wife"),
    **dict.fromkeys(["老公", "丈夫", "先生"], "husband"),
    **dict.fromkeys(["儿子"], "son"),
    **dict.fromkeys(["女儿"], "daughter"),
    **dict.fromkeys(["孩子", "小孩"], "children"),
    **dict.fromkeys(["奶奶", "外婆", "姥姥"], "grandmother"),
    **dict.fromkeys(["爷爷", "外公", "姥爷"], "grandfather"),
    **dict.fromkeys(["叔叔", "舅舅", "伯伯"], "uncle"),
    **dict.fromkeys(["阿姨", "姑姑", "姨妈"], "aunt"),
    **dict.fromkeys(["男朋友", "男友"], "boyfriend"),
    **dict.fromkeys(["女朋友", "女友"], "girlfriend"),
    **dict.fromkeys(["朋友", "好友", "闺蜜"], "friend"),
    **dict.fromkeys(["室友"], "roommate"),
    **dict.fromkeys(["老板", "上司", "领导"], "boss"),
    **dict.fromkeys(["同事"], "colleague"),
    **dict.fromkeys(["邻居"], "neighbour"),
    **dict.fromkeys(["老师"], "teacher"),
}
_KIN_ZH_RE = "|".join(sorted(_KIN_ZH, key=len, reverse=True))
# words that start sentences capitalised without being names
_NOT_NAMES = _words(
    """a an the my our your his her their its this that these those it he she they we you i
    in on at for after before when while during today yesterday tomorrow tonight last next
    every some many most all both each no not also and but or so if because as with from to
    of by since then there here what who which why how one two three four five six seven
    eight nine ten being having once now recently lately currently usually often always
    sometimes never monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december user users mr mrs
    ms dr"""
)
_SELF_WORDS = frozenset({"i", "me", "myself", "my", "mine"})
_PRONOUNS = frozenset({"he", "she", "they", "it", "his", "her", "their", "its", "him", "them"})
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|《[^》]*》|「[^」]*」|«[^»]*»")
_WORD = re.compile(r"[A-Za-z][A-Za-z\-]*|'s\b|[.!?;]")
_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程"
    "苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝"
    "龚邵万钱严覃武戴莫孔向汤宫常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦"
    "俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房"
    "滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应"
    "臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝"
)
_NAME_FOLLOW = frozenset(
    "是在有说觉想要去喜今昨明最很也和的每一正已经刚会能对把被给跟与都还又就才不没打计决上下这那"
    "从为因让叫做开感认希准常总非特比看买参学写读玩吃喝住养带告问爱认收得，。、！？；："
)
# two-character words that start with a surname character but are no name
_NOT_ZH_NAMES = _words(
    """周末 周一 周二 周三 周四 周五 周六 周日 周天 周围 周年 高兴 高中 高考 马上 方便 方面 方法
    白天 黄色 金色 金鱼 钱包 江边 石头 毛衣 万一 于是 向来 何时 程序 史上 夏天 韩国 宋朝 唐朝 明天
    明年 常常 时候 时间 文化 安排 安静 齐全 关于 关系 成功 成绩 全部 全家 应该 和平 商场 车上 路上
    游泳 游戏 华山 黎明 龙虾 孙子 司机 房子 简单 景点 单位 师傅 包子 曲子 古代 古典 吉他 苏州 江苏
    杭州 武汉 长城 温暖 康复 施工 易于 乔迁 宁静 尚未 符合 舒服 柯基 梅花 凌晨 毕业 季节 裴多 霍金
    盛开 曲线 蓝色 蓝天 路过 卫生 米饭 全职 应用 边上 师兄 师姐 沙滩 荣幸 桑拿 明白 明显 池塘 查看
    麻烦 邓紫 张学"""
)
_ZH_LEAD = re.compile(
    r"^(?:今天|昨天|明天|前天|后天|最近|今晚|昨晚|早上|晚上|上午|下午|中午|这几天|周末|上周末|这个周末)[，,]?"
)


@dataclass(frozen=True, slots=True)
class Subject:
    """Whom an entry is about (`refs`, empty: unknown) and everyone it names (`named`)."""

    refs: frozenset[str]
    named: frozenset[str]


_UNKNOWN = Subject(frozenset(), frozenset())


def _is_name(word: str) -> bool:
    low = word.lower()
    return word[:1].isupper() and low not in _NOT_NAMES and not low.endswith("ing")


@lru_cache(maxsize=65536)
def subject_of(text: str) -> Subject:
    """The subject of one entry's text (see the module's description)."""
    plain = _QUOTED.sub(" ", text)
    if re.search(r"[\u4e00-\u9fff]", plain) and not re.search(r"[A-Za-z]{3}", plain):
        return _zh_subject(plain)
    return _en_subject(plain)


def _en_subject(text: str) -> Subject:
    tokens = _WORD.findall(text)
    named: set[str] = set()
    first: str | None = None
    stopped = False
    speaker = False
    start = True
    n = 0
    while n < len(tokens):
        word = tokens[n]
        low = word.lower()
        following = tokens[n + 1] if n + 1 < len(tokens) else ""
        if word in ".!?;":
            start = True
            n += 1
            continue
        ref: str | None = None
        if low in ("my", "our") and following.lower() in _KIN_EN:
            ref = "kin:" + _KIN_EN[following.lower()]
            n += 1
        elif low in _KIN_EN:
            named.add("kin:" + _KIN_EN[low])
        elif low in _SELF_WORDS:
            speaker = True
            ref = SELF
        elif _is_name(word):
            parts = [word]
            while n + 1 < len(tokens) and tokens[n + 1][:1].isupper() and tokens[n + 1] != "I":
                n += 1
                parts.append(tokens[n])
            after = tokens[n + 1] if n + 1 < len(tokens) else ""
            # a capitalised first word is a name only where a name can stand: before a verb
            # ("Caroline is", "Anna's") or beside another name
            if not start or after == "'s" or (after[:1].islower() and not after.endswith("ing")):
                ref = "name:" + " ".join(p.lower() for p in parts)
        elif low in _PRONOUNS and first is None:
            stopped = True
        if ref is not None:
            named.add(ref)
            if first is None and not stopped:
                first = ref
        start = False
        n += 1
    if first is None:
        return Subject(frozenset(), frozenset(named))
    refs = {first}
    if first.startswith("name:") and speaker:
        refs.add(SELF)
    return Subject(frozenset(refs), frozenset(named))


def _zh_subject(text: str) -> Subject:
    named = {"kin:" + _KIN_ZH[m] for m in re.findall(_KIN_ZH_RE, text)}
    body = _ZH_LEAD.sub("", text.strip())
    ref: str | None = None
    kin = re.match(rf"^我?的?({_KIN_ZH_RE})", body)
    if kin and (body.startswith("我") or len(kin.group(1)) >= 2):
        ref = "kin:" + _KIN_ZH[kin.group(1)]
    elif body.startswith("我") and not body.startswith("我们"):
        ref = SELF
    else:
        name = _zh_name(body)
        if name is not None:
            ref = "name:" + name
        elif "我" in body[:8] and not re.search(rf"我的?(?:{_KIN_ZH_RE})", body[:10]):
            ref = SELF
    if ref is None:
        return Subject(frozenset(), frozenset(named))
    named.add(ref)
    return Subject(frozenset({ref}), frozenset(named))


def chinese_name(text: str) -> str | None:
    """The Chinese name a third-person fact starts with (张伟下周要考试 → 张伟), or None."""
    return _zh_name(text.strip())


def _zh_name(body: str) -> str | None:
    if len(body) < 3 or body[0] not in _SURNAMES or body[:2] in _NOT_ZH_NAMES:
        return None
    if body[2] in _NAME_FOLLOW:
        return body[:2]
    if len(body) > 3 and body[3] in _NAME_FOLLOW and body[1] not in _NAME_FOLLOW:
        return body[:3]
    return None


@lru_cache(maxsize=4096)
def _name_pattern(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![a-z]){re.escape(value)}(?![a-z])")


@lru_cache(maxsize=1 << 16)
def _names(text: str, refs: frozenset[str], named: frozenset[str]) -> bool:
    """Whether an entry (its `text`, the references it makes) names one of `refs` other than
    the speaker (names: as a word, in any case; relatives: in any form)."""
    if (refs - {SELF}) & named:
        return True
    low = text.lower()
    for ref in refs:
        kind, _, value = ref.partition(":")
        if kind != "name":
            continue
        if value.isascii() and _name_pattern(value).search(low):
            return True
        if not value.isascii() and value in text:
            return True
    return False


def subjects_differ(a: str, b: str) -> bool:
    """Whether two texts are about different subjects (`subjects_apart` of one pair)."""
    sa, sb = subject_of(a), subject_of(b)
    if not sa.refs or not sb.refs or sa.refs & sb.refs:
        return False
    return not (_names(b, sa.refs, sb.named) or _names(a, sb.refs, sa.named))


def subjects_apart(texts: Sequence[str]) -> np.ndarray:
    """Which pairs of these texts are about different subjects (a boolean matrix)."""
    found = [subject_of(t) for t in texts]
    out = np.zeros((len(texts), len(texts)), dtype=bool)
    known = [n for n, s in enumerate(found) if s.refs]
    if len(known) < 2:
        return out
    kinds = list(dict.fromkeys(found[n].refs for n in known))
    if len(kinds) < 2:
        return out
    which = {refs: k for k, refs in enumerate(kinds)}
    group = np.array([which[found[n].refs] for n in known])
    disjoint = np.array([[not (s & t) for t in kinds] for s in kinds])
    # names[k, x]: the x-th known entry names the subject `kinds[k]`
    names = np.array(
        [[_names(texts[n], refs, found[n].named) for n in known] for refs in kinds], dtype=bool
    )
    named = names[group]  # [x, y]: entry y names entry x's subject
    apart = disjoint[np.ix_(group, group)] & ~named & ~named.T
    out[np.ix_(known, known)] = apart
    return out
