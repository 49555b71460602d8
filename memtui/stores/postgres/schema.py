"""memtui's own tables beside the agent's (the agent's table is never altered): the ledger,
the before-images of the rows each transaction touched, and what the Go columns cannot hold
(memtui-only statuses, the decay anchor). Every row names the agent table it belongs to."""

from __future__ import annotations

LEDGER = "memtui_ledger"
BACKUP = "memtui_backup"
ENTRY = "memtui_entry"

CREATE = f"""
CREATE TABLE IF NOT EXISTS {LEDGER} (
    store_table TEXT NOT NULL,
    tx_id BIGINT NOT NULL,
    at TIMESTAMPTZ NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (store_table, tx_id)
);
CREATE TABLE IF NOT EXISTS {BACKUP} (
    store_table TEXT NOT NULL,
    tx_id BIGINT NOT NULL,
    at TIMESTAMPTZ NOT NULL,
    memory_id BIGINT NOT NULL,
    row_image TEXT,
    PRIMARY KEY (store_table, tx_id, memory_id)
);
CREATE TABLE IF NOT EXISTS {ENTRY} (
    store_table TEXT NOT NULL,
    memory_id BIGINT NOT NULL,
    status TEXT,
    last_decayed_at TIMESTAMPTZ,
    PRIMARY KEY (store_table, memory_id)
);
"""

NOTICE = (
    "memtui created its tables memtui_ledger, memtui_backup and memtui_entry in this database "
    "(its ledger, backups and the statuses the Go table cannot hold); the agent's table is "
    "unchanged"
)
