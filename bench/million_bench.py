"""memtui at 1,000,000 entries of 1,000 users: time and peak memory of each step a person
takes, each as a whole process (start-up included; peak from /usr/bin/time or /proc).

    python bench/million_bench.py [--entries 1000000] [--users 1000] [--keep DIR]

1. open: loading the native store (`open_store(...).memories()`);
2. plan: `memtui plan STORE --profile longterm|default --out F` (the version-2 file);
3. apply: `memtui apply STORE F --yes` of the longterm plan (every pre-approved action);
4. first paint: `memtui STORE` in a pseudo-terminal (120×40), process start until the table's
   header ("importance") is on the screen, as bench/tui_bench.py measures it at 100k.

Everything is written to a temporary folder that is removed at the end (1M entries are a
360 MB store and plans of 400-500 MB).
"""

from __future__ import annotations

import argparse
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fcntl
import termios

from pairs_bench import ENV, ROOT, memtui, run


def paint(cmd: list[str], marker: bytes, timeout: float) -> tuple[float, float]:
    """Seconds from process start until `marker` is on the terminal, and the peak RSS (MB)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.environ.update({**ENV, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none"})
        os.execvp(cmd[0], cmd)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    start = time.perf_counter()
    seen = b""
    took = float("nan")
    try:
        while time.perf_counter() - start < timeout:
            ready, _, _ = select.select([fd], [], [], 0.05)
            if ready:
                try:
                    seen = (seen + os.read(fd, 65536))[-4096:]
                except OSError:
                    break
                if marker in seen:
                    took = time.perf_counter() - start
                    break
        return took, _peak_mb(pid)
    finally:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(fd)


def _peak_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return float("nan")
    line = next((x for x in status.splitlines() if x.startswith("VmHWM:")), "VmHWM: nan kB")
    return float(line.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--keep", help="use (and keep) this folder instead of a temporary one")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="memtui-million-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        bench(folder, args.entries, args.users)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


def step(label: str, wall: float, peak: float, note: str = "") -> None:
    print(f"{label:<34} {wall:>8.1f} s {peak:>8.0f} MB  {note}", flush=True)


def bench(folder: Path, entries: int, users: int) -> None:
    ENV["MEMTUI_DATA"] = str(folder / "data")  # backups and caches stay in the folder
    store = folder / "store.json"
    if not store.exists():
        wall, peak, _ = run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; sys.path.insert(0, 'bench');"
                "from pairs_bench import make_store;"
                f"make_store(Path({str(folder)!r}), 'store', {entries}, {users})",
            ]
        )
        step("make the store (not memtui)", wall, peak, f"{store.stat().st_size:,} bytes")
    print(f"{entries:,} entries, {users:,} users")
    wall, peak, _ = run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {str(ROOT)!r}); from memtui.stores import open_store;"
            f"print(len(open_store({str(store)!r}).memories()))",
        ]
    )
    step("open (load every entry)", wall, peak)
    # the plan names the store it was made for: the longterm plan is made for a copy, which
    # it is then applied to
    target = folder / "applied.json"
    shutil.copyfile(store, target)
    for profile, planned in (("longterm", target), ("default", store)):
        out = folder / f"plan-{profile}.json"
        wall, peak, _ = run(memtui("plan", str(planned), "--profile", profile, "--out", str(out)))
        step(f"plan --profile {profile} --out", wall, peak, f"{out.stat().st_size:,} bytes")
        if profile == "longterm":
            try:
                wall, peak, _ = run(memtui("apply", str(target), str(out), "--yes"))
                step("apply (longterm plan, all approved)", wall, peak)
            except subprocess.CalledProcessError:  # memtui said why on stderr
                print("apply (longterm plan, all approved): refused", flush=True)
            target.unlink()
    wall, peak = paint([sys.executable, "-m", "memtui", str(store)], b"importance", 600.0)
    step("first paint of the table (pty)", wall, peak)


if __name__ == "__main__":
    main()
