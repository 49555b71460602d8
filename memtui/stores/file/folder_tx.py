"""All-or-nothing changes to a folder of files (a Claude Code memory folder; a Hermes
`memories` folder): a write-ahead intent in memtui's sidecar, new contents written to temporary
names first, then renamed into place, then the intent closed.

The order, and why a crash at any instant leaves the folder exactly before or after:
1. each new content goes to `.<name>.memtui-new-<pid>.<hex>` beside its file, fsynced;
2. every file the change touches is checked to still be what memtui read (else `Overtaken`);
3. the intent (`<sidecar>/folder-intent.json`: temp name, target, the hashes before and after,
   files to remove) is written atomically: from here on the change is decided;
4. the temps are renamed over their files, removed files unlinked, folders fsynced — a file
   that is neither before nor after by then (an agent wrote it after a crash) is left as the
   agent wrote it, memtui's version set aside in the sidecar;
5. the intent is removed.
`recover` (run on open and before every write) finishes a decided change whose writer died
(steps 4–5 again; each is idempotent) and removes temps no intent names (a change that died
before step 3 never happened).

The folder as one value: `pack` makes the bytes memtui hashes, keeps as a backup and parses
(a JSON object naming each file and its text); `fingerprint` is what `stat` says of each
file (name, inode, size, mtime) and of the folder, a cheap check before the hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

import orjson

from memtui.errors import StoreFormatError
from memtui.stores.file.files import atomic_write, fsync_dir, write_temp

INTENT = "folder-intent.json"
_TEMP_MARK = ".memtui-new-"
# one memory file larger than this is no agent's memory (Claude Code loads 25 KB of its index)
MAX_MEMBER_BYTES = 1 << 20

Fingerprint = tuple[tuple[str, int, int, int], ...]


class Overtaken(Exception):
    """A file the change touches is no longer what memtui read: nothing was written."""


def member_names(folder: Path, patterns: Iterable[str]) -> list[str]:
    """The folder's files matching `patterns` (relative, `/`-separated), sorted."""
    names: set[str] = set()
    for pattern in patterns:
        for p in folder.glob(pattern):
            names.add(p.relative_to(folder).as_posix())
    return sorted(n for n in names if _TEMP_MARK not in n)


def read_members(folder: Path, names: Iterable[str]) -> dict[str, bytes]:
    """Each file's bytes; a link, a non-file or a file too large is refused with one line."""
    out: dict[str, bytes] = {}
    for name in names:
        path = folder / name
        try:
            st = os.lstat(path)
        except OSError as e:
            raise StoreFormatError(f"{path}: cannot read it ({e.strerror})") from None
        if stat.S_ISLNK(st.st_mode):
            raise StoreFormatError(
                f"{path}: is a symbolic link; memtui reads and writes only the folder's own "
                "files (replace the link with the file it points to)"
            )
        if not stat.S_ISREG(st.st_mode):
            continue
        if st.st_size > MAX_MEMBER_BYTES:
            raise StoreFormatError(
                f"{path}: {st.st_size:,} bytes, far more than an agent's memory file holds "
                f"(memtui opens files up to {MAX_MEMBER_BYTES:,} bytes); nothing was read"
            )
        try:
            out[name] = path.read_bytes()
        except OSError as e:
            raise StoreFormatError(f"{path}: cannot read it ({e.strerror})") from None
    return out


def pack(kind: str, files: dict[str, str]) -> bytes:
    """The folder as one JSON value (sorted names): what is hashed, backed up and parsed."""
    return orjson.dumps(
        {"memtui_folder": kind, "files": dict(sorted(files.items()))}, option=orjson.OPT_INDENT_2
    )


def unpack(value: object, kind: str) -> dict[str, str] | None:
    """The files of a value `pack` made for `kind` (None: not one)."""
    if not isinstance(value, dict) or value.get("memtui_folder") != kind:
        return None
    files = value.get("files")
    if not isinstance(files, dict) or not all(isinstance(v, str) for v in files.values()):
        raise StoreFormatError(f"a memtui folder image of {kind} without its files")
    return files


def fingerprint(folder: Path, names: Iterable[str]) -> Fingerprint:
    rows = []
    for name in ("", *names):
        try:
            st = os.lstat(folder / name) if name else os.stat(folder)
        except OSError:
            continue
        rows.append((name, st.st_ino, st.st_size, 0 if not name else st.st_mtime_ns))
    if rows and rows[0][0] == "":
        st = os.stat(folder)
        rows[0] = ("", st.st_ino, 0, st.st_mtime_ns)  # an added or removed file
    return tuple(rows)


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _current(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def commit(
    folder: Path,
    sidecar: Path,
    before: dict[str, bytes],
    after: dict[str, bytes],
    *,
    new_mode: int,
    before_rename: Callable[[], None] | None = None,
) -> None:
    """Make the folder's files `after` where they are `before` now, all or nothing.

    Raises `Overtaken` (nothing written) when a touched file changed since it was read."""
    writes = {n: d for n, d in after.items() if before.get(n) != d}
    removes = [n for n in before if n not in after]
    temps: dict[str, Path] = {}
    try:
        for name, data in writes.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                mode = os.stat(target).st_mode & 0o777
            except FileNotFoundError:
                mode = new_mode
            temps[name] = _write_temp(target, data, mode)
        for name in [*writes, *removes]:
            if _current(folder / name) != before.get(name):
                raise Overtaken(name)
        intent = {
            "pid": os.getpid(),
            "writes": [
                {
                    "name": n,
                    "temp": temps[n].name,
                    "sha": _sha(writes[n]),
                    "was": _sha(before.get(n)),
                }
                for n in writes
            ],
            "removes": [{"name": n, "sha": _sha(before[n])} for n in removes],
        }
        sidecar.mkdir(parents=True, exist_ok=True)
        if before_rename is not None:
            before_rename()
        atomic_write(sidecar / INTENT, orjson.dumps(intent), mode=0o600)
    except BaseException:
        for temp in temps.values():
            with contextlib.suppress(OSError):
                os.unlink(temp)
        raise
    _apply(folder, intent, sidecar)
    os.unlink(sidecar / INTENT)
    fsync_dir(sidecar)


def _write_temp(target: Path, data: bytes, mode: int) -> Path:
    return write_temp(target, data, mode, _TEMP_MARK)


def _apply(folder: Path, intent: dict[str, object], sidecar: Path | None = None) -> list[str]:
    """Steps 4 of a decided change; each step can run again after a crash. A file someone
    rewrote since the change was decided stays as they wrote it (memtui's version is kept in
    the sidecar, `sidecar`, else beside it): the names of those files."""
    touched: set[Path] = {folder}
    kept: list[str] = []
    writes = intent.get("writes", [])
    removes = intent.get("removes", [])
    assert isinstance(writes, list) and isinstance(removes, list)
    for w in writes:
        target = folder / str(w["name"])
        temp = target.with_name(str(w["temp"]))
        if temp.exists():
            now = _sha(_current(target))
            if "was" not in w or now in (w["was"], w["sha"]):
                os.replace(temp, target)
            else:
                place = (sidecar or temp.parent) / f"not-written-{temp.name.lstrip('.')}"
                os.replace(temp, place)
                kept.append(str(w["name"]))
        touched.add(target.parent)
    for r in removes:
        target = folder / str(r["name"])
        # a file someone rewrote since the change was decided stays
        if _sha(_current(target)) == r["sha"]:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(target)
        touched.add(target.parent)
    for place in touched:
        fsync_dir(place)
    return kept


def recover(folder: Path, sidecar: Path) -> str | None:
    """Finish a change whose writer died after deciding it; remove temps of changes that
    never were. Returns a line saying what was finished (None: nothing was)."""
    done: str | None = None
    intent_path = sidecar / INTENT
    live: set[str] = set()
    try:
        intent = orjson.loads(intent_path.read_bytes())
    except FileNotFoundError:
        intent = None
    except orjson.JSONDecodeError:
        intent = None  # written atomically: never torn; a damaged one decides nothing
        with contextlib.suppress(OSError):
            os.unlink(intent_path)
    if isinstance(intent, dict):
        pid = intent.get("pid")
        if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
            live = {str(w.get("temp")) for w in intent.get("writes", [])}
        else:
            kept = _apply(folder, intent, sidecar)
            os.unlink(intent_path)
            fsync_dir(sidecar)
            n = len(intent.get("writes", [])) + len(intent.get("removes", []))
            done = f"{folder}: finished a change to {n} files that an interrupted memtui decided"
            if kept:
                done += (
                    f"; {', '.join(kept)} changed since, and stay as changed (memtui's version "
                    f"is in {sidecar}, not-written-*)"
                )
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            if _TEMP_MARK in name and name not in live:
                pid_text = name.split(_TEMP_MARK, 1)[1].split(".")[0]
                if pid_text.isdigit() and int(pid_text) != os.getpid() and _alive(int(pid_text)):
                    continue
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(dirpath, name))
    return done


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
