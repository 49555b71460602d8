"""The names a profile chooses between, as types (mypy checks every profile) and as tuples (for
argument parsers, config validation and the TUI's choosers)."""

from __future__ import annotations

from typing import Literal, get_args

Method = Literal["pi", "tf-cosine", "jaro-winkler", "token-set", "memtui"]
DecayModelName = Literal["pi", "longterm", "halflife", "ebbinghaus"]
MergeRule = Literal["pi", "longterm", "thesearch", "keep-base", "memtui"]
ExpireKind = Literal["expire", "archive", "deprecate"]
Linkage = Literal["average", "complete", "single"]

METHODS: tuple[Method, ...] = get_args(Method)
DECAY_MODELS: tuple[DecayModelName, ...] = get_args(DecayModelName)
MERGE_RULES: tuple[MergeRule, ...] = get_args(MergeRule)
EXPIRE_KINDS: tuple[ExpireKind, ...] = get_args(ExpireKind)
LINKAGES: tuple[Linkage, ...] = get_args(Linkage)
