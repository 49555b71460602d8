"""A signal during memtui's start-up (while Python loads it) ends it quietly with 128 + the
signal's number, and nothing it would have run runs."""

from __future__ import annotations

import signal

import pytest

from memtui import launch


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_while_loading_ends_quietly(
    signum: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran: list[bool] = []

    def loading() -> object:
        signal.raise_signal(signum)  # arrives in the middle of the imports
        return lambda: ran.append(True) or 0

    monkeypatch.setattr(launch, "_load", loading)
    before = signal.getsignal(signal.SIGINT)
    assert launch.main() == 128 + signum
    assert not ran
    assert "interrupted" in capsys.readouterr().err
    assert signal.getsignal(signal.SIGINT) is before  # the command's own handling is back


def test_without_a_signal_the_command_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch, "_load", lambda: lambda: 7)
    assert launch.main() == 7
