"""One entry by hand: a form to edit an entry's content, importance, category and tags, or to
write a new one (with its user where the store has users). ctrl+s checks it against the store's
format (the service says why it cannot hold it), shows what will change and asks, with an
optional reason; the change is one transaction that `u` undoes."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Grid, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Input, Label, Select, Static, TextArea

from memtui.errors import MemtuiError
from memtui.model import Memory
from memtui.service import EntryEdit, Service
from memtui.stores.ledger import Transaction
from memtui.stores.protocol import MemoryStore
from memtui.textsafe import one_line
from memtui.tui.bindings import bindings_for
from memtui.tui.failures import GuardedHandlers
from memtui.tui.host import host
from memtui.tui.widgets.editable import shown, typed
from memtui.views import shorten


def split_tags(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))


def change_lines(before: Memory, after: Memory) -> Text:
    """What an edit changes, field by field (memory text shown literally)."""
    text = Text()
    for name in ("content", "importance", "category", "tags"):
        old, new = getattr(before, name), getattr(after, name)
        if old == new:
            continue
        shown_old, shown_new = (
            (", ".join(old) or "-", ", ".join(new) or "-") if name == "tags" else (old, new)
        )
        text.append(f"{name}\n", style="bold")
        text.append("  was  ", style="dim")
        text.append(shorten(one_line(str(shown_old)), 200) + "\n")
        text.append("  now  ", style="dim")
        text.append(shorten(one_line(str(shown_new)), 200) + "\n")
    return text


class EntryFormScreen(GuardedHandlers, Screen[None]):
    """Edit `memory`, or (memory None) write a new entry."""

    HELP_TITLE = "Editing or adding an entry"
    AUTO_FOCUS = "#content"
    BINDINGS: ClassVar[list[BindingType]] = bindings_for("EntryFormScreen")
    DEFAULT_CSS = """
    EntryFormScreen #form-title { background: $panel; padding: 0 1; }
    EntryFormScreen #fields { grid-size: 2; grid-columns: 12 1fr; grid-rows: 7 1 1 1 1;
        grid-gutter: 1 1; height: auto; padding: 1 1 0 1; }
    EntryFormScreen Label { width: 100%; text-align: right; text-style: bold; }
    EntryFormScreen #content { border: round $border-blurred; }
    EntryFormScreen #content:focus { border: round $border; }
    EntryFormScreen #content-label { padding-top: 1; }
    EntryFormScreen #problem { padding: 0 1; color: $error; height: auto; }
    EntryFormScreen #hint { padding: 0 1; color: $text-muted; height: auto; }
    """

    def __init__(
        self,
        store: MemoryStore,
        service: Service,
        memory: Memory | None = None,
        *,
        user: str | None = None,
    ) -> None:
        super().__init__()
        self.store = store
        self.service = service
        self.memory = memory
        has_users = store.traits.has_users
        self.users = sorted({m.user_id for m in store.memories() if m.user_id and has_users})
        self.user = user if user in self.users else (self.users[0] if self.users else None)
        self.categories = service.entries.categories(store)
        self.fixed_types = store.traits.categories is not None
        self._initial: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        memory = self.memory
        if memory is None:
            title = Text("New entry", style="bold")
        else:
            title = Text("Edit ", style="bold")
            title.append(one_line(memory.id), style="bold")
            title.append(f" ({memory.status.value})", style="dim")
        title.append(f" · {one_line(str(self.store.path))} ({self.store.format_name})", style="dim")
        yield Static(title, id="form-title")
        with VerticalScroll():
            with Grid(id="fields"):
                yield Label("content", id="content-label")
                yield TextArea(
                    shown(memory.content) if memory else "",
                    id="content",
                    soft_wrap=True,
                    placeholder="what the agent should remember",
                )
                yield Label("importance")
                yield Input(
                    f"{memory.importance:g}" if memory else "0.8",
                    id="importance",
                    compact=True,
                    placeholder="0 to 1",
                )
                yield Label("category")
                category = memory.category if memory else "fact"
                if self.fixed_types:
                    options = self.categories
                    if category not in options:
                        options = [category, *options]
                    yield Select(
                        [(Text(one_line(c)), c) for c in options],
                        value=category,
                        allow_blank=False,
                        id="category",
                        compact=True,
                    )
                else:
                    yield Input(shown(category), id="category", compact=True)
                yield Label("tags")
                yield Input(
                    shown(", ".join(memory.tags)) if memory else "",
                    id="tags",
                    compact=True,
                    placeholder="comma, separated",
                )
                if memory is None and self.users:
                    yield Label("user")
                    yield Select(
                        [(u, u) for u in self.users],
                        value=self.user or self.users[0],
                        allow_blank=False,
                        id="user",
                        compact=True,
                    )
            yield Static(id="problem")
            yield Static(self._hint(), id="hint")
        yield Footer(compact=True, show_command_palette=False)

    def _hint(self) -> Text:
        text = Text()
        memory = self.memory
        if memory is not None:
            created = memory.created_at.date().isoformat() if memory.created_at else "-"
            text.append(
                f"source {memory.source.value} · user {one_line(memory.user_id or '-')} · "
                f"created {created} · {memory.access_count} uses\n",
                style="bold",
            )
        cap, types = self.store.traits.content_cap, self.store.traits.categories
        if cap is not None and types is not None:
            name = self.store.format_name
            text.append(f"{name} holds up to {cap} characters and {len(types)} types. ")
        text.append(
            "tab moves between fields; ctrl+s checks and asks before saving (with an optional "
            "reason); the change is one transaction, u undoes it."
        )
        return text

    def on_mount(self) -> None:
        rows = len(self.query_one("#fields").children) // 2
        # the content's 7 lines, one per other field, a gap between rows, the padding above
        self.query_one("#fields").styles.height = 7 + 2 * (rows - 1) + 1
        self.query_one("#content", TextArea).focus()
        self._initial = self._values()

    def _shown_values(self, memory: Memory) -> tuple[str, str, str, str]:
        """What the form shows for `memory`: content, importance, category, tags."""
        return (
            shown(memory.content),
            f"{memory.importance:g}",
            shown(memory.category),
            shown(", ".join(memory.tags)),
        )

    def store_reloaded(self, store: MemoryStore) -> None:
        """The store was read again (ctrl+r): if this entry changed under the form, say so,
        show the new values in the fields not touched here, and ask again on ctrl+s."""
        self.store = store
        old = self.memory
        if old is None or self._initial is None:
            return
        current = store.find(old.id)
        if current is None:
            self._problem(f"{old.id} is no longer in the store: escape leaves the form.")
            return
        before, after = self._shown_values(old), self._shown_values(current)
        if before == after:
            self.memory = current
            return
        names = ("content", "importance", "category", "tags")
        values = self._values()
        kept = []
        moved = []
        for n, name in enumerate(names):
            if before[n] == after[n]:
                continue
            moved.append(
                f"{name} {shorten(one_line(before[n]), 40)} → {shorten(one_line(after[n]), 40)}"
            )
            if values[n] != self._initial[n]:
                kept.append(name)  # the person's own value stays
            else:
                self._set_field(name, after[n])
        self.memory = current
        self._initial = (*after, self._initial[4])
        said = f"Changed outside memtui while you edited: {'; '.join(moved)}."
        if kept:
            said += f" Your {', '.join(kept)} kept;"
        self._problem(said + " ctrl+s shows the change against the new values and asks again.")

    def _set_field(self, name: str, value: str) -> None:
        field = self.query_one(f"#{name}")
        if isinstance(field, TextArea):
            field.text = value
        elif isinstance(field, (Input, Select)):
            field.value = value

    def _values(self) -> tuple[object, ...]:
        user = self.query("#user")
        return (
            self.query_one("#content", TextArea).text,
            self.query_one("#importance", Input).value,
            self._category(),
            self.query_one("#tags", Input).value,
            user.first(Select).value if user else None,
        )

    def _category(self) -> str:
        field = self.query_one("#category")
        value = field.value if isinstance(field, (Input, Select)) else ""
        return str(value).strip()

    def unsaved(self) -> str | None:
        if self._initial is not None and self._values() != self._initial:
            return "the changes in the form" if self.memory else "the new entry"
        return None

    def action_back(self) -> None:
        host(self).leave_screen(self)

    def _problem(self, text: str) -> None:
        self.query_one("#problem", Static).update(Text(one_line(text)))

    def _importance(self) -> float:
        raw = self.query_one("#importance", Input).value.strip()
        try:
            return float(raw)
        except ValueError:
            raise MemtuiError(f"the importance must be a number from 0 to 1, not {raw!r}") from None

    def action_save(self) -> None:
        try:
            if self.memory is None:
                self._save_new()
            else:
                self._save_edit(self.memory)
        except MemtuiError as e:
            self._problem(str(e))

    def _save_edit(self, memory: Memory) -> None:
        edit = EntryEdit(
            content=typed(self.query_one("#content", TextArea).text, memory.content),
            importance=self._importance(),
            tags=split_tags(typed(self.query_one("#tags", Input).value, ", ".join(memory.tags))),
            category=typed(self._category(), memory.category),
        )
        after = self.service.entries.edited(self.store, memory.id, edit)
        if after is None:
            self._problem("Nothing changed: edit a field first (escape leaves).")
            return
        self._problem("")
        body = Text()
        body.append(f"Change {one_line(memory.id)}:\n", style="bold")
        body.append_text(change_lines(memory, after))
        body.append("\nOne transaction with a backup; u undoes it.", style="dim")

        def job(store: MemoryStore, reason: str | None) -> Transaction:
            tx = self.service.entries.edit(store, memory.id, edit, reason)
            if tx is None:
                raise MemtuiError(f"{memory.id} already is as the form says")
            return tx

        host(self).confirm_change(
            "Save the changes?",
            body,
            job,
            lambda tx: f"Edited {memory.id} (transaction {tx.id}); u undoes it.",
            close=True,
        )

    def _save_new(self) -> None:
        user = self.query("#user")
        draft = self.service.entries.new_memory(
            self.store,
            self.query_one("#content", TextArea).text,
            category=self._category(),
            importance=self._importance(),
            tags=split_tags(self.query_one("#tags", Input).value),
            user_id=str(user.first(Select).value) if user else None,
        )
        self._problem("")
        body = Text()
        body.append("Add a new entry", style="bold")
        if draft.user_id:
            body.append(f" for user {one_line(draft.user_id)}", style="bold")
        body.append(f" ({draft.category}, importance {draft.importance:g}):\n\n")
        body.append(shorten(one_line(draft.content), 300))
        body.append("\n\nOne transaction with a backup; u undoes it.", style="dim")

        def job(store: MemoryStore, reason: str | None) -> Transaction:
            return self.service.entries.add_memory(store, draft, reason)

        host(self).confirm_change(
            "Add the entry?",
            body,
            job,
            lambda tx: f"Added {draft.id} (transaction {tx.id}); u undoes it.",
            close=True,
        )
