"""memtui: see, consolidate and safely change AI agents' long-term memory stores."""

__version__ = "0.1.0"
