"""A `memtui` command is one function: declared with its arguments beside it, it is on the
command line, in `--help`, gets its store opened and its usage errors said like every other."""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memtui.cli.common import UsageError, emit_json
from memtui.cli.registry import COMMANDS, arg, command, later
from memtui.service import Service
from memtui.stores.protocol import MemoryStore
from tests.conftest import FIXTURES, CliResult

Cli = Callable[..., CliResult]
ROOT = Path(__file__).parent.parent


@pytest.fixture
def toy() -> Iterator[list[str]]:
    """Registers `memtui toy STORE [--user U] [--json]` for one test; what its `--user`
    choices were asked for records when its arguments were declared."""
    asked: list[str] = []

    def users() -> list[str]:
        asked.append("users")
        return ["alice", "bob"]

    def check(args: argparse.Namespace) -> None:
        if args.times < 1:
            raise UsageError("--times must be 1 or more")

    @command(
        "toy",
        "count a user's entries",
        store=True,
        json=True,
        check=check,
        arguments=(
            arg("--user", choices=later(users), help="whose entries"),
            arg("--times", type=int, default=1, metavar="N"),
        ),
    )
    def cmd_toy(args: argparse.Namespace, svc: Service, store: MemoryStore) -> int:
        n = sum(1 for m in store.memories() if args.user in (None, m.user_id)) * args.times
        if args.json:
            emit_json({"entries": n})
        else:
            print(f"{n} entries in {store.path.name}")
        return 0

    yield asked
    del COMMANDS["toy"]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "memory-store.json"
    shutil.copy(FIXTURES / "realistic-store.json", path)
    return path


def test_a_command_declared_in_a_test_runs_through_main(
    toy: list[str], cli: Cli, store: Path
) -> None:
    done = cli("toy", store)
    assert done.code == 0, done.err
    total = int(done.out.split()[0])
    assert total > 0 and done.out.endswith(f"entries in {store.name}\n")
    assert cli("toy", store, "--times", "3").out.startswith(f"{total * 3} entries")
    assert json.loads(cli("toy", store, "--json").out) == {"entries": total}


def test_its_help_its_usage_errors_and_its_store_come_from_the_declaration(
    toy: list[str], cli: Cli, store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        cli("--help")
    with pytest.raises(SystemExit):
        cli("toy", "--help")
    assert toy == ["users"]  # declared once its parser was used, not before
    capsys.readouterr()
    with pytest.raises(SystemExit) as wrong:
        cli("toy", store, "--user", "carol")
    assert wrong.value.code == 2 and "invalid choice: 'carol'" in capsys.readouterr().err
    assert cli("toy", store, "--times", "0").err == "memtui: --times must be 1 or more\n"
    missing = cli("toy", tmp_path / "nowhere.json")
    assert (
        missing.code == 1 and missing.err.startswith("memtui: ") and "Traceback" not in missing.err
    )


def test_the_help_lists_it_after_the_others(
    toy: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from memtui.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "count a user's entries" in out
    assert out.index("    locate") < out.index("    toy")


def test_a_command_that_reads_no_store_loads_neither_the_planner_nor_numpy(store: Path) -> None:
    code = (
        "import sys\n"
        "from memtui.cli import main\n"
        f"codes = [main(['locate']), main(['list', {str(store)!r}, '--limit', '1'])]\n"
        "heavy = [m for m in ('numpy', 'memtui.engine.planner', 'memtui.service.plans') "
        "if m in sys.modules]\n"
        "print(codes, heavy)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[0, 0] []"
