"""A child process forked from the test process (already imported: no interpreter start per
kill) that runs a function, for the kill -9 loops: it reports on a pipe as a spawned child would
on its stdout, and a traceback it ends with is what the parent reads from its stderr."""

from __future__ import annotations

import os
import signal
import traceback
from collections.abc import Callable


class Forked:
    """`body(say)` in a forked child; `say(line)` writes a line the parent reads with
    `readline()`. The child never returns into the test process: it leaves with os._exit."""

    def __init__(self, body: Callable[[Callable[[str], None]], object]) -> None:
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            os.close(out_r)
            os.close(err_r)
            code = 0
            try:
                body(lambda line: _write_all(out_w, f"{line}\n".encode()))
            except BaseException:
                _write_all(err_w, traceback.format_exc().encode())
                code = 1
            os._exit(code)
        os.close(out_w)
        os.close(err_w)
        self.pid = pid
        self._out = os.fdopen(out_r, "rb")
        self._err = err_r

    def readline(self) -> str:
        """The child's next line ('' once it has ended)."""
        return self._out.readline().decode()

    def kill(self) -> str:
        """kill -9, wait for the child to end, and return what it left on its stderr."""
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        self._out.close()
        chunks = []
        while chunk := os.read(self._err, 65536):
            chunks.append(chunk)
        os.close(self._err)
        return b"".join(chunks).decode(errors="replace")


def _write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]
