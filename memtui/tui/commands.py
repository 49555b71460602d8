"""The command palette (ctrl+p): commands named by what they act on (`store: …`, `view: …`,
`entry: …`, `theme: …`) and Textual's own (theme, keys, screenshot, quit), found by their
name or by what they do."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial

from rich.text import Text
from textual.command import DiscoveryHit, Hit, Hits, Provider

from memtui.tui.host import host

# a match on the description ranks below the same match on the name
DESCRIPTION_WEIGHT = 0.9


class MemtuiCommands(Provider):
    def commands(self) -> Iterator[tuple[str, str, Callable[[], object]]]:
        yield from host(self).palette_commands()
        for command in self.app.get_system_commands(self.screen):
            yield command.title, command.help, command.callback

    async def discover(self) -> Hits:
        for name, help_text, callback in self.commands():
            yield DiscoveryHit(name, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, callback in self.commands():
            by_name = matcher.match(name)
            by_help = matcher.match(help_text) * DESCRIPTION_WEIGHT
            if by_name <= 0 and by_help <= 0:
                continue
            shown = matcher.highlight(name) if by_name >= by_help else Text(name)
            yield Hit(max(by_name, by_help), shown, partial(callback), text=name, help=help_text)
