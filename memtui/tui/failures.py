"""Exceptions that escape a handler (bugs): the traceback goes to a log file in memtui's data
folder and one line goes on screen. Where the handler's message loop can go on, the app keeps
running; where it cannot (a screen that failed to build, a render), it exits non-zero with
that line."""

from __future__ import annotations

import traceback
from datetime import UTC, datetime
from pathlib import Path

from textual.message import Message
from textual.worker import Worker, WorkerState

from memtui import locations
from memtui.textsafe import one_line

LOG_NAME = "tui-errors.log"


def error_log() -> Path:
    return locations.data_dir() / LOG_NAME


def log_traceback(error: BaseException) -> Path | None:
    """Append the traceback to the log; where it went, or None if it could not be written."""
    path = error_log()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as log:
            log.write(f"--- {datetime.now(UTC).isoformat(timespec='seconds')}\n")
            log.write("".join(traceback.format_exception(error)))
    except OSError:
        return None
    return path


def one_line_report(error: BaseException, log: Path | None) -> str:
    where = f"traceback in {log}" if log is not None else "the traceback could not be written"
    return one_line(f"memtui hit a bug: {type(error).__name__}: {error} ({where})")


class GuardedHandlers:
    """Mixed into the app, its screens and widgets: an exception in a message handler or a
    worker is reported (`report_error`) and the message loop goes on."""

    async def _dispatch_message(self, message: Message) -> None:
        try:
            await super()._dispatch_message(message)  # type: ignore[misc]
        except Exception as error:
            report = getattr(getattr(self, "app", None), "report_error", None)
            if report is None:
                raise
            report(error)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            report = getattr(getattr(self, "app", None), "report_error", None)
            if report is not None:
                report(event.worker.error)
