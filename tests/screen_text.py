"""What a person sees: the app's screen as plain text lines (colours and styles dropped)."""

from __future__ import annotations

from textual.app import App


def screen_lines(app: App[object]) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


def screen_text(app: App[object]) -> str:
    return "\n".join(screen_lines(app))
