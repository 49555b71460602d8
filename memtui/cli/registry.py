"""How a `memtui` command is declared: one function, and beside it the decorator that names it
and lists its arguments.

    @command("chain", "an entry's lineage", store=True, json=True, arguments=(arg("id"),))
    def cmd_chain(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int: ...

`store=True` adds the `STORE` argument and hands the function the store opened through the
service; `json=True` adds `--json`; `check` runs on the arguments before the store is opened
(a usage error comes before the store is read). A command's arguments are declared only when
its parser is used, so a value that costs an import to know (`later(...)`) is not paid for by
the other commands.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from memtui.service import Service

# the order `memtui --help` lists them in; a command not named here comes after these
LISTED = (
    "demo", "stats", "list", "show", "edit", "add", "history", "undo", "compact", "backups",
    "backup", "rollback", "import", "export", "sim", "pairs", "plan", "apply", "merge",
    "supersede", "restore", "chain", "label", "labels", "calibrate", "decay", "watch", "outside",
    "doctor", "locate",
)  # fmt: skip


@dataclass(frozen=True)
class Later:
    """An option's value known only by importing something: resolved when its parser is built."""

    value: Callable[[], Any]


def later(value: Callable[[], Any]) -> Later:
    return Later(value)


@dataclass(frozen=True)
class Arg:
    flags: tuple[str, ...]
    options: dict[str, Any]

    def add_to(self, parser: argparse._ActionsContainer) -> None:
        options = {k: v.value() if isinstance(v, Later) else v for k, v in self.options.items()}
        parser.add_argument(*self.flags, **options)


def arg(*flags: str, **options: Any) -> Arg:
    """One argument, as `ArgumentParser.add_argument` takes it."""
    return Arg(flags, options)


@dataclass(frozen=True)
class OneOf:
    """Options of which at most one may be given."""

    choices: tuple[Arg, ...]

    def add_to(self, parser: argparse._ActionsContainer) -> None:
        group = parser.add_mutually_exclusive_group()
        for choice in self.choices:
            choice.add_to(group)


def one_of(*choices: Arg) -> OneOf:
    return OneOf(choices)


Run = Callable[..., int]


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    run: Run
    arguments: tuple[Arg | OneOf, ...]
    store: bool
    json: bool
    warn: bool
    check: Callable[[argparse.Namespace], None] | None
    by_user: Callable[[argparse.Namespace], bool] | None = None
    """Whether the command reads a database table a user at a time (`Stores.open`)."""

    def declare(self, parser: argparse.ArgumentParser) -> None:
        if self.json:
            parser.add_argument("--json", action="store_true", help="print JSON (docs/design.md)")
        if self.store:
            parser.add_argument("store", metavar="STORE")
        for argument in self.arguments:
            argument.add_to(parser)

    def __call__(self, args: argparse.Namespace, svc: Service) -> int:
        if self.check is not None:
            self.check(args)
        if not self.store:
            return self.run(args, svc)
        by_user = self.by_user is not None and self.by_user(args)
        return self.run(args, svc, svc.stores.open(args.store, warn=self.warn, by_user=by_user))


COMMANDS: dict[str, Command] = {}


def command(
    name: str,
    help: str,
    *,
    arguments: Sequence[Arg | OneOf] = (),
    store: bool = False,
    json: bool = False,
    warn: bool = True,
    check: Callable[[argparse.Namespace], None] | None = None,
    by_user: Callable[[argparse.Namespace], bool] | None = None,
) -> Callable[[Run], Run]:
    """Register the function below as `memtui NAME` (see the module's docstring)."""

    def register(run: Run) -> Run:
        COMMANDS[name] = Command(
            name, help, run, tuple(arguments), store, json, warn, check, by_user
        )
        return run

    return register


def listed() -> list[Command]:
    """Every command, in the order `memtui --help` lists them."""
    known = [COMMANDS[n] for n in LISTED if n in COMMANDS]
    return known + [c for n, c in COMMANDS.items() if n not in LISTED]


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        print(f"memtui: {message}", file=sys.stderr)
        raise SystemExit(2)


class CommandParser(Parser):
    """A command's parser: its arguments are declared the first time it parses or shows help."""

    pending: Command | None = None

    def declared(self) -> CommandParser:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            pending.declare(self)
        return self

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self.declared()
        return super().parse_known_args(args, namespace)

    def format_usage(self) -> str:
        self.declared()
        return super().format_usage()

    def format_help(self) -> str:
        self.declared()
        return super().format_help()


def add_commands(sub: argparse._SubParsersAction, *, declare: bool) -> None:  # type: ignore[type-arg]
    for cmd in listed():
        parser = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        parser.set_defaults(func=cmd)
        parser.pending = cmd
        if declare:
            parser.declared()
