"""The command palette (ctrl+p): commands named by what they act on (`store: …`, `view: …`,
`entry: …`, `theme: …`)."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider


class MemtuiCommands(Provider):
    async def discover(self) -> Hits:
        for name, help_text, callback in self.app.palette_commands():  # type: ignore[attr-defined]
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self.app.palette_commands():  # type: ignore[attr-defined]
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(callback), help=help_text)
