"""Notices at 80x24 never pile up over the screen (issue 22, item 9)."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets._toast import Toast

from tests.test_tui_keys import app_for, demo, ready  # noqa: F401

os.environ["TEXTUAL_ANIMATIONS"] = "none"


async def test_refusals_in_a_row_show_a_few_toasts_the_newest_and_each_once(
    demo: Path,  # noqa: F811
) -> None:
    app = app_for(demo)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await ready(pilot)
        for n in range(8):
            app.notify(f"refusal {n}", title="Not changed", severity="error")
        for _ in range(5):
            app.notify("the same refusal", title="Not changed", severity="error")
        await pilot.pause(0.2)
        toasts = [str(t.render()) for t in app.screen.query(Toast)]
        assert len(toasts) == 3, toasts
        assert sum("the same refusal" in t for t in toasts) == 1
        assert any("refusal 7" in t for t in toasts)
        assert sum(t.region.height for t in app.screen.query(Toast)) <= 12
