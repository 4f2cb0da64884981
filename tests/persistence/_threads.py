"""Threads in every state a prune must tell apart (tests of `persistence.retention`, `lgsp prune`).

`record` leaves, on any checkpointer and store: finished old threads (with a worker's
output, an effect outcome and a source each in the store), a halted one, one paused at
an interrupt, one stopped mid-run, then (after the time it returns) a recent one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore
from langgraph.types import interrupt

from langgraph_supervisor_pro import FINISH, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.persistence import StoreEffects, output_namespace

SOURCES = ("research_team", "sources")
FINISHED = ["done-1", "done.2/x", "leased"]
"""The finished (`done`), old threads `record` leaves; `leased` is held during a prune."""


def _route(view: Any) -> str:
    if view.task.startswith("loop"):
        return "writer"  # until max_steps halts the run
    if view.ledger:
        return "FINISH"
    return "asker" if view.task.startswith("ask") else "writer"


def _writer(task: WorkerTask) -> str:
    return f"wrote {task.task}"


def _asker(task: WorkerTask) -> str:
    return f"told {interrupt({'question': task.task})}"


def team() -> Any:
    return create_supervisor(
        [
            Worker(name="writer", description="Writes.", agent=_writer),
            Worker(name="asker", description="Asks a person.", agent=_asker),
        ],
        router=_route,
        max_steps=2,
        ping_pong_window=None,
    )


def ops_tree(pages: int = 1) -> Any:
    """A root whose one worker is a domain (`ops`, a stateful subgraph) that pages `pages` times."""
    domain = create_supervisor(
        [Worker(name="pager", description="Pages.", agent=_writer)],
        router=lambda view: FINISH if len(view.ledger) >= pages else "pager",
        name="ops",
    )
    return create_supervisor(
        [Worker(name="ops", description="Operations.", agent=domain)],
        router=lambda view: FINISH if view.ledger else "ops",
    )


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def ask(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text)]}


def record(saver: BaseCheckpointSaver[Any], store: BaseStore) -> datetime:
    """Old threads (finished, halted, paused, mid-run), then the middle time, then a recent one.

    Each finished thread also has an effect outcome and a source in the store.
    """
    app = team().compile(checkpointer=saver, store=store)
    for thread in FINISHED:
        assert app.invoke(ask(f"report on {thread}"), config(thread))["status"] == "done"
        StoreEffects(store).run(f"{thread.replace('/', '%2F')}/1/1/writer/mail", lambda k: "sent")
        label = thread.replace(".", "%2E")
        store.put((*SOURCES, label), "s1", {"url": "https://example.org"})
    assert app.invoke(ask("loop forever"), config("halted"))["status"] == "halted"
    assert "__interrupt__" in app.invoke(ask("ask a person"), config("paused"))
    for _ in app.stream(ask("report mid-run"), config("mid-run"), durability="sync"):
        break  # the run stops after its first step, with the next one pending
    middle = datetime.now(UTC)
    assert app.invoke(ask("report recent"), config("recent"))["status"] == "done"
    return middle


async def arecord(saver: BaseCheckpointSaver[Any], store: BaseStore) -> datetime:
    app = team().compile(checkpointer=saver, store=store)
    for thread in FINISHED:
        assert (await app.ainvoke(ask(f"report on {thread}"), config(thread)))["status"] == "done"
    assert "__interrupt__" in await app.ainvoke(ask("ask a person"), config("paused"))
    middle = datetime.now(UTC)
    assert (await app.ainvoke(ask("report recent"), config("recent")))["status"] == "done"
    return middle


def heads(saver: BaseCheckpointSaver[Any]) -> set[str]:
    return {str(i.config["configurable"]["thread_id"]) for i in saver.list(None)}


def store_items(store: BaseStore, thread: str) -> int:
    prefixes = [
        output_namespace(thread, "-")[:-1],
        StoreEffects.thread_namespace(thread),
        (*SOURCES, thread.replace(".", "%2E")),
    ]
    return sum(len(store.search(p, limit=1000)) for p in prefixes)


ALL = {"done-1", "done.2/x", "leased", "halted", "paused", "mid-run", "recent"}
