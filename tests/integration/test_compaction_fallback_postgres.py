"""The compaction fallback on Postgres (issue 35): checkpoints, the archive of dropped
messages and the summarizer's breaker state all in the database.

The workload of tests/compaction/test_fallback.py (an 8,000-token worker, 20 hops of
~600 words) with a summarizer that always raises: the breaker's state goes through the
Postgres store's locked read-modify-write, shared by the compaction step and the agent's
middleware.
"""

from __future__ import annotations

import uuid

import pytest
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_supervisor_pro import (
    Compaction,
    Worker,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro._breakers import Breaker
from langgraph_supervisor_pro.compaction._archive import dropped_messages
from langgraph_supervisor_pro.compaction._compactor import summarizer_breaker_namespace
from langgraph_supervisor_pro.testing import FunctionChatModel
from tests._helpers import routes
from tests.compaction.test_fallback import HOPS, WORKER_WINDOW, FakeClock, tokens, worker_model

pytestmark = pytest.mark.integration


def test_a_failing_summarizer_on_postgres_truncates_archives_and_opens_its_breaker(
    pg_database: str,
) -> None:
    down = FunctionChatModel(reply=lambda call: RuntimeError("provider down"), record=True)
    model = worker_model()
    compaction = Compaction(
        summarizer=down,
        max_context_tokens=WORKER_WINDOW,
        token_counter=count_tokens_approximately,
        breaker=Breaker(failures=2, window=600, cooldown=60, clock=FakeClock()),
    )
    graph = create_supervisor(
        [Worker(name="researcher", description="Researches.", model=model)],
        router=routes(*["researcher"] * HOPS),
        max_steps=HOPS,
        compaction=compaction,
        name="desk",
    )
    config = {"configurable": {"thread_id": f"fallback-{uuid.uuid4().hex[:8]}"}}
    with open_checkpointer(pg_database) as saver, open_store(pg_database) as store:
        app = graph.compile(checkpointer=saver, store=store)
        out = app.invoke(
            {"messages": [("user", "Research the account")]}, config, durability="sync"
        )
        assert out["status"] == "done" and len(out["ledger"]) == HOPS
        assert max(tokens(c.messages) for c in model.calls) <= WORKER_WINDOW
        entries = out["compactions"]
        assert entries and all(e["kind"] == "truncated" for e in entries)
        assert [e["attempts"] for e in entries[:2]] == [3, 3]
        assert all(e["attempts"] == 0 for e in entries[2:])
        assert len(down.calls) == 6
        for entry in entries:
            item = store.get(tuple(entry["stored"]["namespace"]), entry["stored"]["key"])
            assert item is not None and len(dropped_messages(item.value)) == entry["removed"]
        state = store.get(summarizer_breaker_namespace(("desk", "researcher")), "state")
        assert state is not None and state.value["state"] == "open"
