"""`open_store` over Postgres: threads sharing the store do not take turns on one lock.

LangGraph's sync `PostgresStore` takes one `threading.Lock` around every pipelined batch
(`put`, `get`, `search`) after checking out its own pooled connection, so threads sharing
a store ran their batches one at a time. The test holds one `put` in the database (an
uncommitted row with its key) and reads another item meanwhile: with the one lock the
read waits for the held `put`.
"""

from __future__ import annotations

import concurrent.futures
import time

import psycopg

from langgraph_supervisor_pro import open_store

PATIENCE = 20.0
"""Seconds a call may take before the test calls it stuck (the one lock: forever)."""
WAITING_ON_A_LOCK = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


def _wait_until_blocked(uri: str) -> None:
    deadline = time.monotonic() + PATIENCE
    with psycopg.connect(uri, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            row = watcher.execute(WAITING_ON_A_LOCK).fetchone()
            if row is not None and row[0] >= 1:
                return
            time.sleep(0.02)
    raise AssertionError("the store's put never reached the database")


def test_threads_sharing_a_pooled_store_do_not_wait_for_each_other(pg_database):
    with open_store(pg_database, pool_size=3) as store:
        store.put(("docs",), "other", {"text": "readable meanwhile"})
        holder = psycopg.connect(pg_database)
        holder.execute(
            "INSERT INTO store (prefix, key, value) VALUES ('docs', 'held', '{}'::jsonb)"
        )
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            try:
                write = pool.submit(store.put, ("docs",), "held", {"text": "second"})
                _wait_until_blocked(pg_database)
                read = pool.submit(store.get, ("docs",), "other")
                item = read.result(timeout=PATIENCE)  # the one lock: waits for the put
                assert not write.done()
            finally:
                holder.rollback()
                holder.close()
            write.result(timeout=PATIENCE)
        assert item is not None and item.value == {"text": "readable meanwhile"}
        held = store.get(("docs",), "held")
        assert held is not None and held.value == {"text": "second"}
