"""Whether a store and its sidecar folder (`<store>.memtui/`: backups, ledger) can be written,
checked before anything is: one line naming the path and the problem."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from memtui.errors import StoreFormatError
from memtui.stores.ledger import SidecarLedger


def _read_only(path: Path, st: os.stat_result) -> bool:
    # the mode bits too: root may write anything, but a file made read-only is meant to stay so
    return not st.st_mode & 0o222 or not os.access(path, os.W_OK)


def check_writable(path: Path) -> None:
    """Refuse a store file made read-only (memtui would replace it with a writable one)."""
    try:
        st = os.stat(path)
    except OSError:
        return  # reading it again says what is wrong
    if _read_only(path, st):
        raise StoreFormatError(
            f"{path}: the file is read-only (mode {stat.S_IMODE(st.st_mode):04o}); memtui "
            "changes nothing in it — make it writable (chmod u+w) to edit it"
        )


def sidecar_problems(sidecar: Path, ledger: SidecarLedger | None) -> list[str]:
    """What keeps memtui from keeping backups and a ledger in `sidecar`, one line each."""
    try:
        st = os.lstat(sidecar)
    except FileNotFoundError:
        return []
    except OSError as e:
        return [f"{sidecar}: cannot use memtui's folder ({e.strerror})"]
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(sidecar)
        except OSError:
            return [f"{sidecar}: is a link to a folder that does not exist"]
    if not stat.S_ISDIR(st.st_mode):
        return [f"{sidecar}: is not a folder (memtui keeps backups and the ledger there)"]
    problems = []
    if _read_only(sidecar, st):
        problems.append(f"{sidecar}: memtui's folder is read-only")
    places = [(sidecar / "backups", True)]
    if ledger is not None:
        places.append((ledger.path, False))
    for place, wants_dir in places:
        what = "memtui's backups folder" if wants_dir else "memtui's ledger"
        try:
            st = os.stat(place)
        except FileNotFoundError:
            continue
        except OSError as e:
            problems.append(f"{place}: cannot use {what} ({e.strerror})")
            continue
        if stat.S_ISDIR(st.st_mode) != wants_dir:
            problems.append(f"{place}: {what} is {'not a folder' if wants_dir else 'a folder'}")
        elif _read_only(place, st):
            problems.append(f"{place}: {what} is read-only")
    return problems
