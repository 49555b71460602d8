"""The `memtui` command: parses the command line and runs the command it names; text or
`--json` output.

A command is one function in the module for what it does (`entries`, `history`, `plans`,
`labels`, `stores`, `outside`), declared with its arguments by `registry.command`. Errors a
user can cause print one line `memtui: ...` on stderr and exit 1; usage errors (bad option
values too) exit 2.
"""

from __future__ import annotations

import argparse
import operator
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtui import __version__, interrupts
from memtui.cli import entries, history, labels, outside, plans, stores  # noqa: F401 (commands)
from memtui.cli.common import UsageError, readable_output, redecode_text, run_tui
from memtui.cli.registry import COMMANDS, Command, CommandParser, Parser, add_commands
from memtui.errors import MemtuiError
from memtui.gcpause import gc_paused

if TYPE_CHECKING:
    from memtui.service import Service

# one parser per process and set of commands: (lazy, the commands it was built from, it)
_built: list[tuple[bool, list[Command], argparse.ArgumentParser]] = []


def build_parser(*, lazy: bool = False) -> argparse.ArgumentParser:
    """The whole command line; `lazy`: a command's arguments are declared when it is used."""
    commands = list(COMMANDS.values())
    for was_lazy, built_from, built in _built:
        same = len(built_from) == len(commands) and all(map(operator.is_, built_from, commands))
        if was_lazy == lazy and same:
            return built
    parser = Parser(
        prog="memtui",
        description=(
            "See and safely change AI agents' long-term memory stores (pi memory-store.json, "
            "Go long-term memory JSON/JSONL, memtui's own TinyDB store). Every change is one "
            "transaction with a backup and a ledger entry, and can be undone. "
            "`memtui [STORE]` opens the terminal UI."
        ),
    )
    parser.add_argument("--version", action="version", version=f"memtui {__version__}")
    parser.add_argument(
        "--config", metavar="PATH", help="config file (default: see `memtui locate`)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    add_commands(sub, declare=not lazy)
    _built[:] = [b for b in _built if b[0] != lazy] + [(lazy, commands, parser)]
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    readable_output()
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(lazy=True)
    try:
        tui = _tui_arguments(args_list, set(COMMANDS))
        if tui is not None:
            store, config_flag = tui
            return run_tui(store, _service(config_flag))
        args = parser.parse_args(args_list)
        redecode_text(args)
        # `plan --config FILE` (older spelling) means the same as `--config FILE plan`
        svc = _service(getattr(args, "profile_config", None) or args.config)
        if args.command is None:
            return run_tui(None, svc)
        # a short-lived command: no cyclic collections over its records
        # the process exits next when it runs as `memtui`: a signal then waits for the exit
        with interrupts.installed(restore=argv is not None), gc_paused():
            code = int(args.func(args, svc))
            # past a commit point signals wait until the command is done (interrupts)
            late = interrupts.late()
            if late is not None:
                print(
                    f"memtui: {interrupts.name(late)} came after the change was committed; it "
                    "stands as reported",
                    file=sys.stderr,
                )
            for line in svc.sidecar_warnings():
                print(line, file=sys.stderr)
        return code
    except UsageError as e:
        print(f"memtui: {e}", file=sys.stderr)
        return 2
    except MemtuiError as e:
        print(f"memtui: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        # raised only before a commit point: once one is passed, signals wait (interrupts)
        print("memtui: interrupted: nothing was written", file=sys.stderr)
        return e.exit_code if isinstance(e, interrupts.Interrupted) else 130
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except OSError as e:  # a write point below that does not say it itself
        where = f"{e.filename}: " if e.filename else ""
        print(f"memtui: {where}{e.strerror or e}", file=sys.stderr)
        return 1


def _service(config_flag: str | None) -> Service:
    from memtui.service import Service

    return Service.from_config(config_flag)


def _tui_arguments(argv: list[str], commands: set[str]) -> tuple[str | None, str | None] | None:
    """`memtui [--config P] [STORE]` opens the TUI: (the store or None, the `--config` value);
    None for any other command line."""
    rest, flag = list(argv), None
    if len(rest) >= 2 and rest[0] == "--config":
        flag, rest = rest[1], rest[2:]
    elif rest and rest[0].startswith("--config="):
        flag, rest = rest[0].removeprefix("--config="), rest[1:]
    if not rest:
        return None, flag
    if len(rest) == 1 and not rest[0].startswith("-") and rest[0] not in commands:
        return rest[0], flag
    return None


if __name__ == "__main__":
    raise SystemExit(main())
