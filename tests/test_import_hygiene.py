"""Nothing outside memtui.tui loads textual: the core (model, stores, engine, llm, the service)
and the command line, checked module by module in a fresh interpreter."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import memtui

ROOT = Path(__file__).parent.parent
FRONT_END = "memtui.tui"


def _modules_outside_the_tui() -> list[str]:
    """Every module of the package (found on disk, so a new one is covered as it is added)."""
    names = ["memtui"]
    for info in pkgutil.walk_packages([str(ROOT / "memtui")], prefix="memtui."):
        if info.name == FRONT_END or info.name.startswith(FRONT_END + "."):
            continue
        if info.name == "memtui.__main__":
            continue
        names.append(info.name)
    return names


def test_no_module_outside_the_tui_imports_textual() -> None:
    modules = _modules_outside_the_tui()
    for expected in ("memtui.stores.file.store", "memtui.model", "memtui.service", "memtui.cli"):
        assert expected in modules
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "    assert 'textual' not in sys.modules, name\n"
        "print('clean')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0 and proc.stdout.strip() == "clean", proc.stderr
    assert memtui.__version__
