"""File primitives: reading with clear errors, atomic replace, the lock file, fingerprints."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import json
import os
import socket
import stat
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memtui.errors import StoreFormatError, StoreLockedError, StoreWriteError
from memtui.sizes import size_text

# pi's lock protocol: retry every 10 ms for up to 2 s; a lock older than 10 s is stale.
LOCK_RETRY_S = 0.010
LOCK_TIMEOUT_S = 2.0
LOCK_STALE_S = 10.0


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or a one-line StoreFormatError naming the file and the problem."""
    try:
        with open_regular(path) as f:
            return f.read()
    except OSError as e:
        raise read_failure(path, e) from None


def open_regular(path: Path) -> io.BufferedReader:
    """`open(path, "rb")` of a regular file; a one-line StoreFormatError for anything else (a
    FIFO would block until a writer came, a device might never end)."""
    # non-blocking, so that opening a FIFO returns at once instead of waiting for a writer
    # (a regular file reads alike either way)
    f = open(path, "rb", opener=_non_blocking)  # noqa: SIM115 (returned open)
    mode = os.fstat(f.fileno()).st_mode
    if stat.S_ISREG(mode):
        return f
    f.close()
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
    kind = (
        "a named pipe (FIFO)"
        if stat.S_ISFIFO(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "a socket"
    )
    raise StoreFormatError(f"{path}: is {kind}, not a store file")


def _non_blocking(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NONBLOCK)


def read_failure(path: Path, e: OSError) -> StoreFormatError:
    """One line for an OSError reading `path`."""
    if isinstance(e, FileNotFoundError):
        return StoreFormatError(f"{path}: no such file")
    if isinstance(e, IsADirectoryError):
        return StoreFormatError(f"{path}: is a directory, not a store file")
    if isinstance(e, PermissionError):
        return StoreFormatError(f"{path}: permission denied (cannot read it)")
    return StoreFormatError(f"{path}: cannot read: {e.strerror or e}")


_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)


def write_failure(path: Path, e: OSError, needs: int | None = None) -> StoreWriteError:
    """One line for an OSError at a write point: the file, the cause, and what was kept."""
    if e.errno in _NO_SPACE:
        room = "" if needs is None else f" (needs about {size_text(needs)})"
        cause = f"no space left on its device{room}"
        if e.errno == errno.EDQUOT:
            cause = f"the disk quota is used up{room}"
    else:
        cause = f"cannot write it ({e.strerror or e})"
    return StoreWriteError(f"{path}: {cause}; nothing was written")


@contextlib.contextmanager
def writing(path: Path, needs: int | None = None) -> Iterator[None]:
    """Turn an OSError raised while writing `path` into one `StoreWriteError` line."""
    try:
        yield
    except OSError as e:
        raise write_failure(path, e, needs) from None


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


CHUNK = 1 << 20


def file_sha256(path: Path) -> str:
    """`sha256` of a file's bytes, read a chunk at a time (a one-line error if unreadable)."""
    try:
        with open_regular(path) as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError as e:
        raise read_failure(path, e) from None


def file_chunks(path: Path) -> Iterator[bytes]:
    """A file's bytes a chunk at a time (a one-line StoreFormatError naming it if it cannot
    be read, never an OSError: a reader's failure is not its writer's)."""
    try:
        f = open_regular(path)  # closed when the chunks end or are dropped
    except OSError as e:
        raise read_failure(path, e) from None
    with f:
        while True:
            try:
                chunk = f.read(CHUNK)
            except OSError as e:
                raise read_failure(path, e) from None
            if not chunk:
                return
            yield chunk


def gzipped(chunks: Iterable[bytes], level: int) -> Iterator[bytes]:
    """`gzip.compress(data, level, mtime=0)` of the chunks' bytes, a chunk at a time."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: gzip's header and trailer
    for chunk in chunks:
        yield packer.compress(chunk)
    yield packer.flush()


class Hashed:
    """Chunks passed on as they are, their sha256 and length counted on the way."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = chunks
        self._hash = hashlib.sha256()
        self.size = 0

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            self._hash.update(chunk)
            self.size += len(chunk)
            yield chunk

    @property
    def sha(self) -> str:
        return self._hash.hexdigest()


@dataclass(frozen=True, slots=True)
class FileStamp:
    """What `stat` says about a file: a cheap check that it is unchanged."""

    inode: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileStamp | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return cls(st.st_ino, st.st_size, st.st_mtime_ns)


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def real_path(path: Path) -> Path:
    """The file a path names once every symlink on the way is followed (relative ones too):
    memtui writes, locks and keeps its sidecar there, never beside a link."""
    return Path(os.path.realpath(path))


def write_temp(path: Path, data: bytes | Iterable[bytes], mode: int, mark: str) -> Path:
    """`data` (or its chunks in turn) in a new file `.<name><mark><pid>.<hex>` beside `path`,
    fsynced, with `mode`; created exclusively (a link planted at its name is never followed),
    removed again if the write fails."""
    while True:
        tmp = path.with_name(f".{path.name}{mark}{os.getpid()}.{os.urandom(4).hex()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        except FileExistsError:
            continue
        break
    try:
        for chunk in (data,) if isinstance(data, bytes) else data:
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    return tmp


def atomic_write(
    path: Path,
    data: bytes | Iterable[bytes],
    mode: int | None = None,
    *,
    before_rename: Callable[[], None] | None = None,
) -> None:
    """Write a temp file beside the real file `path` names, fsync it, rename it over that
    file, fsync the folder.

    A crash at any instant leaves either the old or the new file there. `before_rename` is
    called once the new file is complete, just before the rename that puts it in place. A
    symlinked `path` stays a link (the file it points to is replaced), and the temp file is created
    exclusively, so a link planted at its name is never followed.
    """
    path = real_path(path)
    if mode is None:
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
    tmp = write_temp(path, data, mode, ".memtui-tmp-")
    try:
        if before_rename is not None:
            before_rename()
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(path.parent)


def remove_stale_temp_files(folder: Path, name: str) -> None:
    """Temp files (and staged lock files) left by a writer killed before its rename."""
    prefixes = (f".{name}.memtui-tmp-", f".{name}.lock.")
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            for prefix in prefixes:
                if entry.name.startswith(prefix):
                    pid = entry.name[len(prefix) :].split(".")[0]
                    if not (pid.isdigit() and _pid_alive(int(pid))):
                        with contextlib.suppress(OSError):
                            os.unlink(entry.path)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _lock_is_stale(lock: Path) -> bool:
    try:
        st = os.lstat(lock)
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(st.st_mode):
        raise StoreFormatError(
            f"{lock}: is a folder, not a lock file, so memtui cannot lock the store; remove "
            "it (rmdir) if nothing uses it"
        )
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(lock)
        except OSError:
            return True  # a link to nothing holds no lock
    # a time more than the stale age ahead (a clock set back since) is as old as can be
    if abs(time.time() - st.st_mtime) > LOCK_STALE_S:
        return True
    # Our own lock files name their owner: a dead process on this host holds nothing.
    try:
        owner = json.loads(lock.read_text(encoding="utf-8"))
        return (
            owner.get("tool") == "memtui"
            and owner.get("host") == socket.gethostname()
            and not _pid_alive(int(owner["pid"]))
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


@contextlib.contextmanager
def store_lock(path: Path, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """pi's lock protocol: exclusive-create `<store>.lock`, retry, break stale locks."""
    lock = path.with_name(path.name + ".lock")
    owner = json.dumps({"tool": "memtui", "pid": os.getpid(), "host": socket.gethostname()})
    deadline = time.monotonic() + timeout
    while True:
        try:
            _create_lock(lock, owner)
        except FileExistsError:
            if _lock_is_stale(lock):
                _break_stale_lock(lock)
                continue
            if time.monotonic() >= deadline:
                raise StoreLockedError(
                    f"{path}: locked by another process ({lock.name} exists); "
                    "try again when it is done"
                ) from None
            time.sleep(LOCK_RETRY_S)
            continue
        except PermissionError:
            raise StoreFormatError(
                f"{path}: permission denied (cannot create {lock.name} in its folder)"
            ) from None
        except OSError as e:
            if e.errno in (errno.EROFS, errno.EACCES):
                raise StoreFormatError(f"{path}: folder is read-only ({e.strerror})") from None
            raise write_failure(lock, e) from None
        break
    try:
        yield
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(lock)


def _break_stale_lock(lock: Path) -> None:
    try:
        os.unlink(lock)
    except FileNotFoundError:
        pass
    except OSError as e:  # immutable (chattr +i), or a folder it cannot write
        raise StoreFormatError(
            f"{lock}: a stale lock memtui cannot remove ({e.strerror}); nothing was written — "
            "remove it by hand (`lsattr` shows an immutable one) when no agent runs"
        ) from None


def _create_lock(lock: Path, owner: str) -> None:
    """Exclusive-create the lock with its owner already inside: a writer killed at any instant
    leaves either no lock or one that names a dead owner (never an empty, anonymous one)."""
    staged = lock.with_name(f".{lock.name}.{os.getpid()}.{os.urandom(4).hex()}")
    fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, owner.encode())
    except BaseException:  # a full disk: no staged file is left behind
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(staged)
        raise
    os.close(fd)
    try:
        os.link(staged, lock)  # atomic, and fails if the lock exists
    except FileExistsError:
        raise
    except OSError as e:
        if e.errno in _NO_SPACE:
            raise
        # a filesystem without hard links: plain exclusive create
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, owner.encode())
        except BaseException:
            os.close(fd)
            with contextlib.suppress(OSError):
                os.unlink(lock)
            raise
        os.close(fd)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(staged)
