"""The demo store: realistic generated memories (see text/NOTICE.md for the bundled text)."""

from memtui.demo.generate import DEFAULT_SIZE, make_demo_memories

__all__ = ["DEFAULT_SIZE", "make_demo_memories"]
