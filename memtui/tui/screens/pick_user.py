"""Which user of a big database table to open: each user with their rows, most first, filtered
by what is typed; Enter opens the highlighted user (as `#user=U` does), or every user's rows
("all users", which reads the whole table)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Protocol

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, OptionList, Static
from textual.widgets.option_list import Option

from memtui.service import Service
from memtui.service.pg_users import TableUsers
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.views import counted

ALL = "\x00all"
"""The option id of "all users" (no user is named so: a NUL is in no user id)."""
SHOWN = 500
"""Users listed at most; typing narrows the rest."""


class UserPickScreen(GuardedHandlers, Screen[str | None]):
    """Dismissed with the chosen user, or None for every user's rows."""

    HELP_TITLE = "Choosing a user of a big table"
    AUTO_FOCUS = "#pick-filter"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("UserPickScreen")
    DEFAULT_CSS = """
    UserPickScreen #title { background: $panel; padding: 0 1; }
    UserPickScreen #pick-filter { margin: 0 1; }
    UserPickScreen #pick-users { height: 1fr; }
    """

    def __init__(self, location: str, table: TableUsers) -> None:
        super().__init__()
        self.location = location
        self.table = table

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="title")
        yield Input(
            placeholder="type to filter the users; ↑ ↓ choose, Enter opens", id="pick-filter"
        )
        yield OptionList(id="pick-users")
        yield Footer(compact=True, show_command_palette=False)

    def _title(self) -> Text:
        users = len(self.table.users)
        title = Text()
        title.append(f"{self.location}", style="bold")
        title.append(
            f" holds {counted(self.table.rows, 'row')} of {counted(users, 'user')}: "
            "open one user's rows, or all of them"
        )
        return title

    def on_mount(self) -> None:
        self.show("")

    def show(self, typed: str) -> None:
        wanted = typed.strip().casefold()
        found = [u for u in self.table.users if wanted in u.user.casefold()]
        options = self.query_one("#pick-users", OptionList)
        options.clear_options()
        width = max((len(u.user) for u in found[:SHOWN]), default=4)
        every = Text(f"all users  {counted(self.table.rows, 'row')}", style="italic")
        every.append(" (reads the whole table: slow)", style="dim")
        options.add_option(Option(every, id=ALL))
        for u in found[:SHOWN]:
            label = Text(u.user.ljust(width), no_wrap=True, overflow="ellipsis")
            label.append(f"  {u.rows:>10,} row{'s' * (u.rows != 1)}", style="dim")
            options.add_option(Option(label, id=u.user))
        if len(found) > SHOWN:
            more = f"… and {len(found) - SHOWN:,} more users: type to narrow"
            options.add_option(Option(Text(more, style="dim"), disabled=True))
        elif not found:
            options.add_option(
                Option(Text(f"no user matches {typed!r}", style="dim"), disabled=True)
            )
        options.highlighted = 1 if found else 0

    @on(Input.Changed, "#pick-filter")
    def _typed(self, event: Input.Changed) -> None:
        self.show(event.value)

    @on(Input.Submitted, "#pick-filter")
    def _entered(self) -> None:
        self.action_open()

    @on(OptionList.OptionSelected, "#pick-users")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        self._open(event.option.id)

    def action_open(self) -> None:
        options = self.query_one("#pick-users", OptionList)
        if options.highlighted is not None:
            self._open(options.get_option_at_index(options.highlighted).id)

    def _open(self, ident: str | None) -> None:
        if ident is None:
            return
        self.dismiss(None if ident == ALL else ident)

    def action_leave(self) -> None:
        """Escape: clear what was typed; with nothing typed, leave memtui opening nothing."""
        typed = self.query_one("#pick-filter", Input)
        if typed.value:
            typed.value = ""
        else:
            self.app.exit()

    def action_cursor_down(self) -> None:
        self.query_one("#pick-users", OptionList).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one("#pick-users", OptionList).action_cursor_up()


class _Opening(Protocol):
    """What of the app the picker needs (tui/app.py `MemtuiApp`)."""

    store_path: str
    shown_location: str
    service: Service
    pick_user: bool
    sub_title: str

    @property
    def store(self) -> object: ...

    def load_store(self, reloaded: bool) -> object: ...

    def push_screen(
        self, screen: Screen[str | None], callback: Callable[[str | None], None]
    ) -> object: ...


def users_to_pick(app: _Opening) -> TableUsers | None:
    """The users to ask about before the app's store first opens (off the UI thread); asked
    again on a reload after the table could not be read."""
    if not app.pick_user or app.store is not None:
        return None
    found = app.service.pg_users.to_pick(app.store_path)
    app.pick_user = False
    return found


def ask(app: _Opening, table: TableUsers) -> None:
    """Show the picker; open the chosen user's rows, or all of them."""

    def chosen(user: str | None) -> None:
        if user is not None:
            app.store_path = app.service.pg_users.for_user(app.store_path, user)
            app.shown_location = app.service.stores.shown_location(app.store_path)
            app.sub_title = app.shown_location
        app.load_store(reloaded=False)

    app.push_screen(UserPickScreen(app.shown_location, table), chosen)
