"""`open_store` over Postgres: threads sharing the store do not take turns on one lock.

LangGraph's sync `PostgresStore` takes one `threading.Lock` around every pipelined batch
(`put`, `get`, `search`) after checking out its own pooled connection, so threads sharing
a store ran their batches one at a time. The test holds one `put` in the database (an
uncommitted row with its key) and reads another item meanwhile: with the one lock the
read waits for the held `put`.
"""

from __future__ import annotations

from langgraph_supervisor_pro import open_store
from tests._pg import while_held

PATIENCE = 20.0
"""Seconds a call may take before the test calls it stuck (the one lock: forever)."""
HOLD = "INSERT INTO store (prefix, key, value) VALUES ('docs', 'held', '{}'::jsonb)"


def test_threads_sharing_a_pooled_store_do_not_wait_for_each_other(pg_database):
    with open_store(pg_database, pool_size=3) as store:
        store.put(("docs",), "other", {"text": "readable meanwhile"})
        put = lambda: store.put(("docs",), "held", {"text": "second"})  # noqa: E731
        with while_held(pg_database, HOLD, (), put, PATIENCE) as pool:
            read = pool.submit(store.get, ("docs",), "other")
            item = read.result(timeout=PATIENCE)  # the one lock: waits for the put
        assert item is not None and item.value == {"text": "readable meanwhile"}
        held = store.get(("docs",), "held")
        assert held is not None and held.value == {"text": "second"}
