"""The core (model, stores, engine, llm) never loads textual: checked in a fresh interpreter."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import memtui

ROOT = Path(__file__).parent.parent
CORE_PACKAGES = ("memtui.stores", "memtui.engine")
CORE_MODULES = (
    "memtui.model",
    "memtui.times",
    "memtui.errors",
    "memtui.llm",
    "memtui.views",
    "memtui.cli",
)


def _core_modules() -> list[str]:
    names = [m for m in CORE_MODULES if (ROOT / (m.replace(".", "/") + ".py")).exists()]
    for package in CORE_PACKAGES:
        folder = ROOT / package.replace(".", "/")
        if folder.exists():
            names.append(package)
            names += [f"{package}.{m.name}" for m in pkgutil.iter_modules([str(folder)])]
    return names


def test_core_modules_do_not_import_textual() -> None:
    modules = _core_modules()
    assert "memtui.stores.store" in modules and "memtui.model" in modules
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
