"""The consolidation rules, one module each; `table.py` says which a profile runs, in order,
and `memtui.engine.planner` runs them."""
