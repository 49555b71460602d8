"""The memtui app: the store's lifecycle (open, reload, the watch for outside changes), themes,
help, the command palette and the error log. The table lives on the home screen
(home_screen.py); every change goes through the commit flow (commit_flow.py). Every store
access runs in a thread worker that posts a typed message."""

from __future__ import annotations

import asyncio
import contextlib
import math
import signal
import sys
import threading
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, cast

from rich.text import Text
from textual import events, on, work
from textual.binding import Binding, BindingType
from textual.dom import DOMNode
from textual.notifications import Notify
from textual.screen import Screen
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service import History, Service, Settings
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui import heap
from memtui.tui.bindings import PaletteCommand, bindings_for, palette_commands, writes
from memtui.tui.commands import MemtuiCommands
from memtui.tui.commit_flow import CommitFlow
from memtui.tui.failures import GuardedHandlers, formatted, one_line_report
from memtui.tui.help_sections import HelpSection, help_sections
from memtui.tui.host import MemtuiHost
from memtui.tui.key_guard import BURST, KeyReads
from memtui.tui.keymap_check import keymap_problems
from memtui.tui.messages import HaystackReady, HistoryReady, OutsideChange, StoreFailed, StoreReady
from memtui.tui.modals import ConfirmScreen, HelpScreen, Question, ReasonConfirmScreen
from memtui.tui.screen_hooks import FollowsReloads, HoldsUnsaved
from memtui.tui.screens import outside as outside_screen
from memtui.tui.screens import pick_user
from memtui.tui.screens.home import HomeScreen
from memtui.tui.screens.merge import MergeScreen
from memtui.tui.themes import DEFAULT_THEME, load_themes
from memtui.tui.widgets.table_model import TableModel, build_haystack

__all__ = ["HomeScreen", "MemtuiApp"]

FIRST_PAINT_WAIT = 5.0  # seconds the loader waits for the table's first paint, at most


class MemtuiApp(GuardedHandlers, CommitFlow):
    TITLE = "memtui"
    CSS_PATH = "memtui.tcss"
    COMMANDS: ClassVar = {MemtuiCommands}  # Textual's system commands included
    ENABLE_COMMAND_PALETTE = True
    HELP_TITLE = "Everywhere"
    burst = BURST  # keys closer than this came in one burst (key_guard.py)
    start_screen: str | None = None  # "label": `memtui label STORE` opens on it
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("MemtuiApp")

    def __init__(
        self,
        store_path: str,
        settings: Settings | None = None,
        *,
        now: datetime | None = None,
        watch_interval: float = 3.0,
        config_path: Path | None = None,
        hint: str | None = None,
        service: Service | None = None,
    ) -> None:
        super().__init__()
        self.store_path = store_path
        self.settings = settings or Settings()
        self.service = service or Service(self.settings, clock=self.now)
        self.shown_location = self.service.stores.shown_location(store_path)  # never a password
        self.fixed_now = now
        self.watch_interval = watch_interval
        self.config_path = config_path
        self.hint = hint
        self.store: MemoryStore | None = None
        self.pick_user = True  # a big table without #user=: ask which user first (once)
        self.key_reads = KeyReads()  # each key's screen and gap (key_guard.py)
        self._burst_noted = -math.inf
        self.history: History | None = None
        self.since_looked: outside_screen.SinceLooked | None = None
        self.load_problem: str | None = None
        self.theme_problems: list[str] = []
        self.exit_code = 0  # 1 once the store failed to open: the process says so
        self.errors_reported = 0  # exceptions shown as one line (the monkey test reads it)
        self._fatal_line = ""
        self._saved_theme = ""  # the theme the config file holds (or memtui started with)
        self._frozen = False  # the first store's records frozen (heap.py)
        self._replaced = False  # a reload replaced the records: settle everything
        self._switch_interval = sys.getswitchinterval()
        self._model = TableModel([], self.now())
        self.quit_after_commit = False  # q (or a signal) came during a commit
        self.quit_line = ""
        self._caught: list[int] = []
        self.keymap_problems = keymap_problems(
            type(self), self.settings.keymap, self.settings.keymap_lines, self.settings.path
        )
        if self.settings.keymap and not self.keymap_problems:
            self.set_keymap(self.settings.keymap)

    def now(self) -> datetime:
        return self.fixed_now or datetime.now(UTC)

    @property
    def home(self) -> HomeScreen:
        """The memory table's screen, whatever is on top of it."""
        return cast(HomeScreen, self.screen_stack[0])

    @property
    def model(self) -> TableModel:
        """What the table shows: the entries, the filter, the sort and the marks."""
        return self._model

    def get_default_screen(self) -> Screen[None]:
        return HomeScreen(self.shown_location, self._model)

    async def on_event(self, event: events.Event) -> None:
        # a question just opened drops the keys of typing under way (screens.Question)
        if isinstance(event, events.Key) and not event.is_forwarded:
            screen = self.screen
            gap = self.key_reads.read(event, screen)
            # (in a question's text box every key types: the box cannot answer it)
            if isinstance(screen, Question) and not isinstance(screen.focused, Input):
                if screen.swallows(event.key, gap):
                    return
                if event.key != "escape" and screen.hold(partial(self._deliver, event), self.burst):
                    return  # taken once no key of the same burst follows it
        await super().on_event(event)

    def _deliver(self, event: events.Key) -> None:
        self.call_later(super().on_event, event)

    @property
    def _last_key_time(self) -> float:
        return self.key_reads.last_time

    async def _on_key(self, event: events.Key) -> None:
        # (Textual calls App._on_key after this one unless the default is prevented: it runs
        # the key's bindings on the screen on top now; key_guard.py says why that is checked)
        read = self.key_reads.typed_at(event)
        screen = self.screen
        if read is not None and read[0] is not screen:
            # typed at a screen since covered or closed (keys of one burst): it does nothing
            event.prevent_default()
            if isinstance(screen, Question):
                screen.swallows(event.key)  # and a question waits for quiet again
            return
        focused = self.focused
        if isinstance(focused, Input) and event.is_printable:
            # an input stops the text it takes: this key was queued for another widget before
            # a key (`/`) moved focus to the input, so it is the input's text, not a command
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        if read is not None and read[1] < self.burst and writes(self._binding_id(event.key)):
            # a change asked for by a key that came in a burst (a paste, typing on a busy
            # machine) is not asked for at all
            event.prevent_default()
            self.bell()
            if event.time - self._burst_noted < 1.0:
                return  # one notice per burst
            self._burst_noted = event.time
            self.notify(
                f"{self.get_key_display(Binding(event.key, ''))} came in a burst of keys "
                "(typing?): nothing was asked or changed. Press it on its own.",
                title="Key ignored",
                severity="warning",
                timeout=4,
            )

    def _binding_id(self, key: str) -> str | None:
        """The id of the binding `key` runs on the screen on top (as App._check_bindings)."""
        for _, bindings in self.screen._modal_binding_chain:
            for binding in bindings.key_to_bindings.get(key, ()):
                if not binding.priority:
                    return binding.id
        return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `u` undoes the newest change from the table only: on another screen a letter means
        # what that screen's footer says (history's `u` undoes the highlighted one)
        return action != "undo" or isinstance(self.screen, HomeScreen)

    # -- leaving ------------------------------------------------------------------------------

    def _unsaved(self, screens: list[Screen[Any]]) -> list[str]:
        found = []
        for screen in screens:
            what = screen.unsaved() if isinstance(screen, HoldsUnsaved) else None
            if what:
                found.append(what)
        return found

    def leave_screen(self, screen: Screen[Any]) -> None:
        """Close `screen`; when it holds work not yet applied or saved, ask first."""

        def leave(yes: bool | None = True) -> None:
            if yes and self.screen is screen:
                self.pop_screen()

        lost = self._unsaved([screen])
        if not lost:
            leave()
            return
        body = Text("Leaving drops " + "; ".join(lost) + ".")
        self.push_screen(ConfirmScreen("Leave without saving?", body), leave)

    async def action_quit(self) -> None:
        if isinstance(self.screen, (ConfirmScreen, ReasonConfirmScreen)):
            return  # a question is open: y or n first
        if self.committing is not None:
            # the commit runs to its end (the store is then the after), then memtui quits
            self.quit_after_commit = True
            self.notify(f"memtui is {self.committing}; it quits once that is written.")
            return
        lost = self._unsaved(self.screen_stack)
        if not lost:
            self.exit(return_code=self.exit_code)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.exit(return_code=self.exit_code)

        body = Text("Quitting drops " + "; ".join(lost) + ".")
        self.push_screen(ConfirmScreen("Quit without saving?", body), answered)

    # -- notices --------------------------------------------------------------------------------

    def _on_notify(self, event: Notify) -> None:
        # toasts never pile up over the screen: the same notice again replaces the one shown,
        # and past a few (by the terminal's height: 3 at 24 rows) the oldest give way, the
        # oldest that is not an error first
        new = event.notification
        shown = self._notifications
        for old in list(shown):
            if (old.title, old.message, old.severity) == (new.title, new.message, new.severity):
                del shown[old]
        room = max(2, self.size.height // 8) - 1
        while len(shown) > room:
            old_first = list(shown)
            del shown[next((n for n in old_first if n.severity != "error"), old_first[0])]
        super()._on_notify(event)

    # -- bugs ---------------------------------------------------------------------------------

    def report_error(self, error: BaseException) -> None:
        """An exception escaped a handler that can go on: one line on screen, the traceback
        in the log."""
        self.errors_reported += 1
        line = one_line_report(error, self.service.log_error(formatted(error)))
        self.notify(line, title="Bug", severity="error", timeout=30, markup=False)

    async def _dispatch_action(self, namespace: DOMNode, action_name: str, params: Any) -> bool:
        try:
            return await super()._dispatch_action(namespace, action_name, params)
        except Exception as error:
            self.report_error(error)
            return True

    def _handle_exception(self, error: Exception) -> None:
        # Textual ends the app here (the loop that raised cannot go on): say it in one line
        self._fatal_line = one_line_report(error, self.service.log_error(formatted(error)))
        super()._handle_exception(error)

    def _fatal_error(self) -> None:
        self.bell()
        self._exit_renderables.append(Text(self._fatal_line))
        self._close_messages_no_wait()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "commit" and event.state is WorkerState.ERROR:
            self._end_commit()  # a commit that raised has ended too

    # -- starting -----------------------------------------------------------------------------

    def _end_commit(self) -> None:
        super()._end_commit()
        if self.quit_after_commit:
            self.exit(return_code=self.exit_code, message=self.quit_line or None)

    def _signalled(self, signum: int) -> None:
        """SIGTERM or SIGHUP: quit as `q` does, without asking. A commit under way runs to its
        end first (a commit is all or nothing: the store is the before or the after); Textual
        restores the terminal on the way out."""
        name = signal.Signals(signum).name
        self.exit_code = 128 + signum
        if self.committing is not None:
            self.quit_line = f"memtui: {name}: quit once the change under way was written"
            self.quit_after_commit = True
            return
        self.exit(return_code=self.exit_code, message=f"memtui: {name}: quit; nothing was lost")

    def _catch_signals(self) -> None:
        try:
            loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(signum, self._signalled, signum)
                self._caught.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or no such signal here: the default stays

    def on_mount(self) -> None:
        self._catch_signals()
        # workers (planning, loading) share the GIL with the UI: hand it over more often while
        # the app runs (given back when it ends)
        self._switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(0.001)
        self._setup_themes()
        self.sub_title = self.shown_location
        if self.watch_interval > 0:
            self.set_interval(self.watch_interval, self.check_outside)

    def on_unmount(self) -> None:
        with contextlib.suppress(RuntimeError):
            loop = asyncio.get_running_loop()
            for signum in self._caught:
                loop.remove_signal_handler(signum)
        sys.setswitchinterval(self._switch_interval)
        heap.release()

    def home_ready(self) -> None:
        """The table screen is on: read the store (unless the keymap is wrong: then it says
        so, and only q works)."""
        if self.keymap_problems:
            self.exit_code = 2
            self.home.show_failure(
                "\n".join(self.keymap_problems),
                title="memtui did not start: the [keymap] in the config file has problems",
                fix="Nothing was read or changed. Fix those lines and start memtui again; q quits.",
            )
            return
        self.load_store(reloaded=False)

    # -- the store ----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, group="store", exit_on_error=False)
    def load_store(self, reloaded: bool) -> None:
        try:
            users = pick_user.users_to_pick(self)
            if users is not None:  # a big table: which user first (screens/pick_user.py)
                self.call_from_thread(pick_user.ask, self, users)
                return
            store = self.service.stores.open(self.store_path)
        except MemtuiError as e:
            self.post_message(StoreFailed(self.shown_location, str(e)))
            return
        memories = store.memories()
        painted = threading.Event()
        self.post_message(StoreReady(store, memories, reloaded, painted))
        # the rest is not on the first screen: it waits until the table is painted, so the
        # UI thread has the interpreter to itself meanwhile
        painted.wait(FIRST_PAINT_WAIT)
        self.post_message(outside_screen.look(self.service, store))
        # what `/` searches, ready before the first keystroke
        self.post_message(HaystackReady(memories, build_haystack(memories)))
        self.post_history(self.build_history(store))

    @work(thread=True, exclusive=True, group="watch", exit_on_error=False)
    def check_outside(self) -> None:
        store = self.store
        if store is not None and not self.outside_change and store.changed_on_disk():
            self.post_message(OutsideChange())

    def check_store(self) -> None:
        self.check_outside()

    def action_reload(self) -> None:
        self.load_store(reloaded=True)

    @on(StoreReady)
    def _store_ready(self, message: StoreReady) -> None:
        self.store = message.store
        self.outside_change = False
        self.read_only = self.service.stores.read_only(message.store)
        self.load_problem = None
        self.exit_code = 0
        self.sub_title = f"{message.store.path} · {message.store.format_name}"
        findings = self.service.stores.findings(message.store)
        if findings:  # the header's badge; `memtui doctor STORE` lists them
            self.sub_title += f" · {len(findings)} finding{'s' * (len(findings) > 1)}"
        self.home.show_store(message.store, message.memories, message.reloaded)
        self.call_after_refresh(message.painted.set)
        self._replaced = self._replaced or message.reloaded
        self._say_problems(message.store)
        if message.reloaded:
            for screen in self.screen_stack[1:]:
                if isinstance(screen, FollowsReloads):
                    screen.store_reloaded(message.store)
            self.notify(f"Reloaded {len(message.store):,} entries.", title="MemoryStore")
            return
        if self.start_screen == "label":
            self.home.action_label()
        if len(message.store) == 0:
            self.notify(
                self.hint or "This store is empty. `memtui demo` opens a realistic one.",
                title="Empty store",
                timeout=10,
            )

    def _say_problems(self, store: MemoryStore) -> None:
        """What `memtui doctor` would report (a ledger that lost transactions, a damaged
        sidecar), with what to do: memtui changes nothing in the store until it is repaired."""
        problems = self.service.stores.problems(store)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            self.notify(
                f"{problems[0]}{more}. Run `memtui doctor {store.path}`.",
                title="The store's record needs a repair",
                severity="error",
                timeout=60,
                markup=False,
            )

    @on(outside_screen.OutsideSeen)
    def _outside_seen(self, message: outside_screen.OutsideSeen) -> None:
        self.since_looked = message.since
        outside_screen.announce(self, message.since)

    @on(HaystackReady)
    def _haystack_ready(self, message: HaystackReady) -> None:
        self.model.offer_haystack(message.memories, message.haystack)
        if not self._frozen:
            # the first store's records, frozen before the first keystroke at no cost: the
            # cyclic collector's full passes no longer walk them (bench/tui_bench.py)
            heap.freeze_new()
            self._frozen = True

    @on(StoreFailed)
    def _store_failed(self, message: StoreFailed) -> None:
        self.load_problem = message.problem
        self.exit_code = 1
        self.home.show_failure(message.problem)

    @on(HistoryReady)
    def _history_ready(self, message: HistoryReady) -> None:
        self.history = message.history
        self.home.history_changed()
        # a load or a commit has built what lives until the next one, and the screen it came
        # from is closed: one pass now, once the result is painted, not in the middle of typing
        self.call_after_refresh(heap.settle, everything=self._replaced)
        self._replaced = False

    @on(OutsideChange)
    def _outside_change(self) -> None:
        if self.outside_change:
            return
        self.outside_change = True
        where = (
            self.service.stores.change_place(self.store) if self.store is not None else "on disk"
        )
        self.notify(
            "Another program changed the store. Press ctrl+r to reload; memtui will not "
            "overwrite that change.",
            title=f"Changed {where}",
            severity="warning",
            timeout=8,
        )
        self.update_status()

    def open_merge(self, members: list[Memory], hidden: int = 0) -> None:
        """The merge screen with exactly these entries; `hidden` of them are not on screen."""
        users = sorted({str(m.user_id) for m in members})
        if len(users) > 1:
            self.notify(
                f"Cannot merge entries of different users ({', '.join(users)}): memories "
                "of one user never mix with another's.",
                title="Not merged",
                severity="error",
                timeout=8,
            )
            return
        store = self.store
        if store is None:
            return
        # as the store has them now: a list on screen may predate a merge
        now_in_store = [store.find(m.id) for m in members]
        retired = [
            m.id for m, cur in zip(members, now_in_store, strict=True) if not cur or not cur.visible
        ]
        if retired:
            self.notify(
                one_line(
                    f"{', '.join(retired)} is already merged or superseded; restore it first."
                ),
                title="Not merged",
                severity="warning",
            )
            return
        members = [m for m in now_in_store if m is not None]
        self.push_screen(MergeScreen(store, members, self.service, hidden=hidden))

    # -- help, themes, palette ----------------------------------------------------------------

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.help_sections()))

    def help_sections(self) -> list[HelpSection]:
        """Every binding of the app and of every screen, as the keymap has it now."""
        return help_sections(self, self._keymap)

    def _setup_themes(self) -> None:
        themes, problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        self.theme_problems = [f"{p.file}: {p.problem}" for p in problems]
        wanted = self.settings.theme or DEFAULT_THEME
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self.theme = DEFAULT_THEME if DEFAULT_THEME in self.available_themes else "textual-dark"
            self.theme_problems.append(f"theme {wanted!r} is unknown; using {self.theme}")
        self._saved_theme = self.theme
        for problem in self.theme_problems:
            self.notify(problem, title="Theme", severity="warning")
        self.theme_changed_signal.subscribe(self, self._theme_changed)

    def set_theme(self, name: str) -> None:
        self.theme = name

    def _theme_changed(self, theme: object) -> None:
        self.update_status()
        if self.theme == self._saved_theme:
            return  # the theme memtui started with: nothing to write
        self._saved_theme = self.theme
        if self.config_path is not None:
            try:
                self.service.save_setting("ui", "theme", self.theme, self.config_path)
            except (OSError, MemtuiError) as e:
                self.notify(f"Could not save the theme: {e}", severity="warning")

    def palette_commands(self) -> list[PaletteCommand]:
        commands = [
            *palette_commands(self, self, "MemtuiApp"),
            *self.home.palette_commands(),
        ]
        for name in sorted(self.available_themes):
            commands.append(
                (
                    f"theme: {name}",
                    "Switch theme (saved in the config)",
                    partial(self.set_theme, name),
                )
            )
        return commands


def _implements_the_host(app: MemtuiApp) -> MemtuiHost:
    return app  # mypy checks here that the app offers what the screens ask of it
