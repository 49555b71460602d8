"""The commands about whole stores: demo, import, export, doctor, locate."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.cli.common import UsageError, emit_json, run_tui
from memtui.cli.registry import arg, command, later
from memtui.textsafe import literal, one_line

if TYPE_CHECKING:
    from memtui.service import Service
    from memtui.stores.protocol import MemoryStore


def _demo_size() -> str:
    from memtui.demo import DEFAULT_SIZE

    return f"entries (default {DEFAULT_SIZE})"


@command(
    "demo",
    "write a realistic demo store and open it",
    arguments=(
        arg("--out", metavar="PATH", help="where to write it (default: see `memtui locate`)"),
        arg(
            "--format",
            choices=("native", "hermes", "hermes-folder", "claude-code"),
            default="native",
            help="native (default); hermes: Hermes Agent's MEMORY.md and USER.md in the folder "
            "PATH; hermes-folder: the same folder opened as one store; "
            "claude-code: a Claude Code memory folder PATH",
        ),
        arg("--size", type=int, metavar="N", help=later(_demo_size)),
        arg("--seed", type=int, metavar="S", help="random seed (default 7)"),
        arg("--fresh", action="store_true", help="regenerate even if the demo store exists"),
        arg("--no-tui", action="store_true", help="only write the store and print its path"),
    ),
)
def cmd_demo(args: argparse.Namespace, svc: Service) -> int:
    from memtui.service.opening import DEMO_MAX_SIZE

    if args.size is not None and not 1 <= args.size <= DEMO_MAX_SIZE:
        raise UsageError(f"--size must be between 1 and {DEMO_MAX_SIZE}")
    path = Path(args.out).expanduser() if args.out else None
    if args.format in ("hermes", "hermes-folder"):
        if args.size is not None or args.seed is not None:
            raise UsageError("--size and --seed make the native demo; the Hermes demo is fixed")
        whole = args.format == "hermes-folder"
        store = svc.stores.hermes_demo(path, fresh=args.fresh, whole=whole)
        print(
            f"demo store: {store.path} ({len(store)} entries, hermes-folder format: MEMORY.md "
            "and USER.md as users memory and user)"
            if whole
            else f"demo store: {store.path} ({len(store)} entries, hermes format; "
            f"USER.md beside it: memtui {store.path.with_name('USER.md')})"
        )
    elif args.format == "claude-code":
        if args.size is not None or args.seed is not None:
            raise UsageError(
                "--size and --seed make the native demo; the Claude Code demo is fixed"
            )
        store = svc.stores.claude_demo(path, fresh=args.fresh)
        print(f"demo store: {store.path} ({len(store)} memory files, claude-code format)")
    else:
        store = svc.stores.demo(path, size=args.size, seed=args.seed, fresh=args.fresh)
        print(f"demo store: {store.path} ({len(store)} entries, native format)")
    if args.no_tui:
        return 0
    return run_tui(str(store.path), svc)


@command(
    "import",
    "copy any store into a new native store",
    arguments=(arg("src", metavar="SRC"), arg("dest", metavar="DEST")),
)
def cmd_import(args: argparse.Namespace, svc: Service) -> int:
    source = svc.stores.open(args.src)
    dest = Path(args.dest).expanduser()
    store = svc.stores.import_store(source, dest)
    print(f"imported {len(store)} entries from {source.format_name} store into {dest} (native)")
    return 0


def _export_formats() -> list[str]:
    from memtui.stores.transfer import EXPORT_FORMATS

    return list(EXPORT_FORMATS)


@command(
    "export",
    "write the store to a new file in a format",
    store=True,
    arguments=(
        arg("dest", metavar="DEST"),
        arg("--format", required=True, choices=later(_export_formats)),
    ),
)
def cmd_export(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    report = svc.stores.export(store, Path(args.dest).expanduser(), args.format)
    print(f"exported {report.written} entries to {report.path} ({report.format})")
    if report.dropped:
        print(
            f"left out {report.dropped} entries that are not active (pi keeps active entries only)"
        )
    if report.renumbered:
        print("ids renumbered 1..n for the Go store; the old id is kept as memtui_id")
    if report.as_fact:
        shown = ", ".join(f"{c} {n}" for c, n in sorted(report.as_fact.items()))
        print(f"written as pi's type fact (pi has no such category): {one_line(shown)}")
    return 0


@command(
    "doctor",
    "what is wrong with a store's ledger and sidecar",
    store=True,
    warn=False,
    arguments=(
        arg(
            "--fix",
            action="store_true",
            help="move damaged ledger entries aside (nothing is deleted)",
        ),
    ),
)
def cmd_doctor(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
    from memtui.views import counted

    problems = svc.stores.problems(store)
    if (problems or svc.stores.leftovers(store)) and args.fix:
        for line in svc.stores.repair(store):
            print(literal(line))
        store = svc.stores.open(args.store, warn=False)
        problems = svc.stores.problems(store)
    leftovers = svc.stores.leftovers(store)
    for line in svc.stores.findings(store):
        print(f"finding: {literal(line)}")
    for line in leftovers:
        print(f"leftover: {literal(line)}")
    if not problems:
        print(
            f"{literal(str(store.path))}: no problems found ({store.format_name} store, "
            f"{counted(len(store.transactions()), 'transaction')}, "
            f"{counted(len(store.backups()), 'backup')})"
        )
        if leftovers:
            print("`memtui doctor STORE --fix` reclaims the leftovers (harmless meanwhile)")
        return 0
    for line in problems:
        print(literal(line))
    hint = "these need a hand" if args.fix else "`--fix` repairs what it can"
    print(f"memtui changes nothing in this store until they are repaired; {hint}")
    return 1


@command("locate", "where memtui keeps its config and data", json=True)
def cmd_locate(args: argparse.Namespace, svc: Service) -> int:
    from memtui import locations

    places = {
        "config": str(svc.settings.path or locations.config_file()),
        "data": str(locations.data_dir()),
        "demo_store": str(locations.demo_store()),
        "hermes_demo": str(locations.hermes_demo()),
        "claude_demo": str(locations.claude_demo()),
        "default_store": str(locations.default_native_store()),
        "pi_store": str(locations.pi_store()),
    }
    if args.json:
        emit_json(places)
    else:
        for key, value in places.items():
            print(f"{key:<14} {value}")
    return 0
