"""Exceptions that escape a handler (bugs): the traceback goes to a log file in memtui's data
folder and one line goes on screen. Where the handler's message loop can go on, the app keeps
running; where it cannot (a screen that failed to build, a render), it exits non-zero with
that line."""

from __future__ import annotations

import traceback
from pathlib import Path

from textual.message import Message
from textual.worker import Worker, WorkerState

from memtui.textsafe import one_line


def formatted(error: BaseException) -> str:
    """The traceback, as the error log keeps it."""
    return "".join(traceback.format_exception(error))


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
