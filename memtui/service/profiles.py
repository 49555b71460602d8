"""Profiles and what they measure: the store's profile, similar pairs, clusters, decay."""

from __future__ import annotations

from collections.abc import Sequence

from memtui.config import resolve_profile
from memtui.engine.candidates import Pair
from memtui.engine.decay import DecayModel, decay_for, decay_for_store, model
from memtui.engine.grouping import Group, active_pairs, group_entries
from memtui.engine.profiles import Profile
from memtui.engine.similarity import text_similarity
from memtui.model import Memory
from memtui.service.base import Part
from memtui.stores.protocol import MemoryStore


class Profiles(Part):
    """A store's profile and the pairs, clusters and decay it defines."""

    def profile(self, store: MemoryStore, name: str | None = None) -> Profile:
        """The store's profile (or `name`) with the settings' `[profiles.NAME]` overrides: the
        same resolution for every command and screen."""
        return resolve_profile(self.shared.settings, store.traits.default_profile, name)

    def default_profile_name(self, store: MemoryStore) -> str:
        return store.traits.default_profile

    def clusters(
        self, memories: Sequence[Memory], method: str, threshold: float, profile: Profile
    ) -> tuple[list[Pair], list[Group]]:
        """Pairs of active entries at or above the threshold, and the groups a person reviews:
        average linkage (a chain of unrelated entries never shows as one group), none over the
        profile's cap (an oversized group is shown in pieces that say so)."""
        return group_entries(
            memories,
            method,
            threshold,
            linkage="average",
            min_size=2,
            max_size=profile.cluster_max,
        )

    def pairs(
        self, store: MemoryStore, method: str | None = None, threshold: float | None = None
    ) -> tuple[list[Pair], str, float]:
        """Pairs of active entries of one user at or above the threshold, highest first,
        with the method and threshold used (the profile's when not given)."""
        profile = self.profile(store)
        method = method or profile.method
        if threshold is None:
            threshold = profile.merge_threshold or 0.8
        return active_pairs(store.memories(), method, threshold)[1], method, threshold

    def similarity(self, a: str, b: str, method: str) -> float:
        return text_similarity(a, b, method)

    def decay_model(
        self, profile: Profile, name: str | None = None, store: MemoryStore | None = None
    ) -> DecayModel:
        """The profile's decay model (for `store`, as its plans decay it: engine/decay.py
        `decay_for_store`), or the one named (at its own default rate)."""
        if name is None and store is not None:
            found = decay_for_store(profile, store.memories())
            if found is not None:
                return found
        return decay_for(profile, name) or model("longterm", profile.decay_rate)
