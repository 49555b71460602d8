"""Run Hermes Agent's own memory code on files memtui wrote (not part of the test suite: it
needs Hermes' code, which memtui does not ship).

    pip download --no-deps hermes-agent==0.19.0 -d /tmp/h
    python -m zipfile -e /tmp/h/hermes_agent-0.19.0-py3-none-any.whl /tmp/h/src
    pip install pyyaml  # Hermes imports it
    python scripts/check_with_hermes.py /tmp/h/src

For the basic and near-full fixtures, memtui edits, merges, fills to the exact cap and undoes;
then Hermes' `MemoryStore` loads each file (its entries must be memtui's), its drift guard
runs, and a Hermes replace and remove must succeed. Last, Hermes' `add` must wait while
memtui holds the lock. One line per check; exit 1 on any failure.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memtui.cli import main as memtui
from memtui.stores import open_store

FIXTURES = ROOT / "tests" / "fixtures" / "hermes"
CAPS = {"MEMORY.md": 2200, "USER.md": 1375}


def run(*args: object) -> None:
    if memtui([str(a) for a in args]) != 0:
        raise SystemExit(f"memtui {' '.join(map(str, args))} failed")


def change(path: Path, how: str) -> None:
    entries = open_store(str(path)).memories()
    if how == "cap":
        now = len("\n§\n".join(m.content for m in entries))
        run("add", path, "中" * (CAPS[path.name] - now - 3))
        return
    run("edit", path, entries[0].id, "--content", entries[0].content + " (checked)")
    run("merge", path, entries[0].id, entries[1].id, "--content", "多行\nmerged\n§ 4.2 inline")
    if how == "undo":
        run("undo", path)
        run("undo", path)


def hermes_store(src: Path, home: Path) -> Any:
    os.environ["HERMES_HOME"] = str(home)
    for name in [m for m in sys.modules if m.split(".")[0] in ("tools", "hermes_constants")]:
        del sys.modules[name]
    if str(src) not in sys.path:
        sys.path.insert(0, str(src))
    from tools.memory_tool import MemoryStore  # type: ignore[import-not-found]

    store = MemoryStore()
    store.load_from_disk()
    return store


def check_files(src: Path, base: Path) -> bool:
    ok = True
    for fixture, how in (("basic", "edit+merge"), ("near-full", "cap"), ("basic", "undo")):
        home = base / f"{fixture}-{how}"
        folder = home / "memories"
        folder.mkdir(parents=True)
        for name in CAPS:
            shutil.copyfile(FIXTURES / fixture / name, folder / name)
            (folder / name).chmod(0o600)
            change(folder / name, how)
        for target, name in (("memory", "MEMORY.md"), ("user", "USER.md")):
            path = folder / name
            written = path.read_bytes()
            hermes = hermes_store(src, home)
            entries = hermes.memory_entries if target == "memory" else hermes.user_entries
            same = entries == [m.content for m in open_store(str(path)).memories()]
            drift = hermes._detect_external_drift(target)
            replaced = hermes.replace(target, entries[0][:20], "REPLACED by Hermes")["success"]
            removed = hermes.remove(target, "REPLACED by Hermes")["success"]
            good = same and drift is None and replaced and removed
            ok &= good
            print(
                f"{'ok ' if good else 'BAD'} {fixture}/{name} after {how}: entries equal {same}, "
                f"drift guard {'accepts' if drift is None else 'refuses'}, Hermes replace "
                f"{replaced}, remove {removed}"
            )
            path.write_bytes(written)
    return ok


def check_lock(src: Path, base: Path) -> bool:
    home = base / "lock"
    (home / "memories").mkdir(parents=True)
    path = home / "memories" / "MEMORY.md"
    path.write_text("A.", encoding="utf-8")
    code = (
        "import sys, time\nfrom pathlib import Path\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "from memtui.stores.formats.hermes import HermesFormat\n"
        f"with HermesFormat().write_lock(Path({str(path)!r})):\n"
        "    print('held', flush=True)\n    time.sleep(1.0)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    hermes = hermes_store(src, home)
    start = time.monotonic()
    added = hermes.add("memory", "B.")["success"]
    waited = time.monotonic() - start
    holder.wait()
    good = added and holder.returncode == 0 and path.read_bytes() == "A.\n§\nB.".encode()
    print(f"{'ok ' if good else 'BAD'} Hermes add waited {waited:.2f} s for memtui's lock")
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("hermes_src", type=Path, help="the unpacked hermes-agent wheel")
    args = parser.parse_args()
    os.environ.setdefault("MEMTUI_DATA", tempfile.mkdtemp())
    base = Path(tempfile.mkdtemp(prefix="memtui-hermes-"))
    try:
        ok = check_files(args.hermes_src, base) & check_lock(args.hermes_src, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
