"""memtui's themes: TOML files in `themes/`, read into `textual.theme.Theme`.

An installed wheel carries them in `memtui/_themes`; an editable install reads the repository's
`themes/` folder."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from textual.color import Color, ColorParseError
from textual.theme import Theme

COLOUR_KEYS = (
    "primary",
    "secondary",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "success",
    "warning",
    "error",
)
DEFAULT_THEME = "memtui-dark"


def themes_folder() -> Path | None:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_themes", here.parent / "themes"):
        if candidate.is_dir():
            return candidate
    return None


@dataclass(frozen=True, slots=True)
class ThemeProblem:
    file: str
    problem: str


def theme_from_toml(text: str, source: str) -> Theme:
    """One theme; ValueError naming the problem if the file is not a valid theme."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"not valid TOML ({e})") from None
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError("no 'name'")
    colours = {}
    for key in COLOUR_KEYS:
        value = raw.get(key)
        if value is None:
            if key == "primary":
                raise ValueError("no 'primary' colour")
            continue
        try:
            Color.parse(value)
        except (ColorParseError, TypeError):
            raise ValueError(f"{key} = {value!r} is not a colour") from None
        colours[key] = value
    variables = raw.get("variables", {})
    if not isinstance(variables, dict) or not all(isinstance(v, str) for v in variables.values()):
        raise ValueError("[variables] must map names to strings")
    dark = raw.get("dark", True)
    if not isinstance(dark, bool):
        raise ValueError("dark must be true or false")
    return Theme(name=name, dark=dark, variables=dict(variables), **colours)


def load_themes(folder: Path | None = None) -> tuple[list[Theme], list[ThemeProblem]]:
    folder = folder or themes_folder()
    themes: list[Theme] = []
    problems: list[ThemeProblem] = []
    if folder is None:
        return themes, problems
    for path in sorted(folder.glob("*.toml")):
        try:
            themes.append(theme_from_toml(path.read_text(encoding="utf-8"), path.name))
        except (OSError, UnicodeDecodeError, ValueError) as e:
            problems.append(ThemeProblem(path.name, str(e)))
    return themes, problems
