"""A loopback TCP proxy between memtui and the test server that loses the connection at the
COMMIT of memtui's transaction. Told `cut_next(mode)`, it is armed by the client's INSERT into
memtui's ledger and cuts both sides at the next COMMIT (once), in one of three places:

- `"before"`: the client's COMMIT is never forwarded (the server rolls back);
- `"mid-reply"`: the server committed; only the first bytes of its reply are forwarded;
- `"after-reply"`: the server committed; its CommandComplete is forwarded, the ReadyForQuery
  that ends the reply is not.

`cut_next("copy")` instead cuts as soon as the server is ready for the rows of memtui's COPY
into its staging table (the CopyInResponse forwarded), while memtui sends them.

Otherwise every connection and message passes through unchanged. The client must not ask for SSL
(`sslmode=disable`): the proxy reads the server's messages by their frames.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

_ARM = b"INSERT INTO memtui_ledger"
_ARM_COPY = b"COPY memtui_stage"
_COMMIT = b"COMMIT\x00"


class CommitCutter:
    def __init__(self, upstream_port: int) -> None:
        self.mode: str | None = None
        self.upstream_port = upstream_port
        self.cuts = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._lock = threading.Lock()
        self._closing = False
        threading.Thread(target=self._accept, daemon=True).start()

    def cut_next(self, mode: str) -> None:
        """Cut the connection at the next COMMIT of a memtui transaction, at `mode`."""
        assert mode in ("before", "mid-reply", "after-reply", "copy")
        self.mode, self.cuts = mode, 0

    def dsn(self, server_dsn: str) -> str:
        """`server_dsn` through the proxy."""
        port = f":{self.upstream_port}/"
        return server_dsn.replace(port, f":{self.port}/") + "?sslmode=disable&gssencmode=disable"

    def close(self) -> None:
        self._closing = True
        self._listener.close()

    def _accept(self) -> None:
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.upstream_port))
            _Pair(self, client, server).start()

    def take_cut(self) -> bool:
        """The one cut this proxy makes (later connections pass through)."""
        with self._lock:
            if self.cuts or self.mode is None:
                return False
            self.cuts += 1
            return True

    @property
    def waiting(self) -> bool:
        return self.mode is not None and not self.cuts


class _Pair:
    def __init__(self, proxy: CommitCutter, client: socket.socket, server: socket.socket) -> None:
        self.proxy, self.client, self.server = proxy, client, server
        self.armed = False
        self.done = False

    def start(self) -> None:
        threading.Thread(target=self._upstream, daemon=True).start()
        threading.Thread(target=self._downstream, daemon=True).start()

    def _cut(self) -> None:
        self.done = True
        for sock in (self.client, self.server):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _upstream(self) -> None:
        tail = b""
        try:
            while not self.done and (chunk := self.client.recv(65536)):
                seen = tail + chunk
                arm = _ARM_COPY if self.proxy.mode == "copy" else _ARM
                if arm in seen and self.proxy.waiting:
                    self.armed = True
                if (
                    self.armed
                    and self.proxy.mode == "before"
                    and _COMMIT in chunk
                    and self.proxy.take_cut()
                ):
                    self._cut()
                    return
                self.server.sendall(chunk)
                tail = seen[-len(_ARM) :]
        except OSError:
            pass
        if not self.done:
            self._cut()

    def _downstream(self) -> None:
        buf = b""
        try:
            while not self.done and (chunk := self.server.recv(65536)):
                buf += chunk
                out = b""
                while len(buf) >= 5:
                    size = 1 + int.from_bytes(buf[1:5], "big")
                    if len(buf) < size:
                        break
                    message, buf = buf[:size], buf[size:]
                    copying = self.proxy.mode == "copy" and message[:1] == b"G"
                    committed = (
                        self.proxy.mode in ("mid-reply", "after-reply")
                        and message[:1] == b"C"
                        and message[5:] == _COMMIT
                    )
                    if self.armed and (copying or committed) and self.proxy.take_cut():
                        if copying:
                            self.client.sendall(out + message)
                            self._cut()
                            return
                        out += message if self.proxy.mode == "after-reply" else message[:3]
                        self.client.sendall(out)
                        self._cut()
                        return
                    out += message
                if out:
                    self.client.sendall(out)
        except OSError:
            pass
        if not self.done:
            self._cut()


@contextmanager
def commit_cutter(upstream_port: int) -> Iterator[CommitCutter]:
    proxy = CommitCutter(upstream_port)
    try:
        yield proxy
    finally:
        proxy.close()
