"""The code of an earlier commit, unpacked beside the checkout, to run as a whole process next
to it in the same run (before and after taking turns on a shared machine)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def branch_point() -> str:
    """Where HEAD left main."""
    return subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()[:12]


def unpack(ref: str, folder: Path) -> Path:
    """`ref`'s tree in `folder`, compiled (as an installed memtui is: a first start of a
    checkout without bytecode compiles every module)."""
    folder.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    compile_tree(folder)
    return folder


def compile_tree(source: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(source / "memtui")],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def run(args: list[str], source: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one process run against the code in `source`."""
    timing = Path(tempfile.mktemp(suffix=".time"))
    cmd = ["/usr/bin/time", "-o", str(timing), "-f", "%M", *args]
    start = time.perf_counter()
    # in the source's folder: `python -m` puts the working folder before PYTHONPATH
    subprocess.run(
        cmd,
        env={**env, "PYTHONPATH": str(source)},
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=source,
    )
    wall = time.perf_counter() - start
    peak = float(timing.read_text().split()[-1]) / 1024
    timing.unlink()
    return wall, peak


def environment(data: Path) -> dict[str, str]:
    return {**os.environ, "MEMTUI_NOW": "2026-11-30T00:00:00Z", "MEMTUI_DATA": str(data)}
