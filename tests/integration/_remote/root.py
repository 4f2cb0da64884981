"""The root graph of the remote-domain tests: its domains are served by another server.

`root(url)` builds it (the tests call it in their own process); `root` is what server A
serves, with server B's URL from `LGSP_REMOTE_URL`. The router sends a task that asks
for a rollback to the remote `ops` domain, anything else to the remote `desk`, once,
then FINISH: it decides from the task and the ledger it is shown.
"""

from __future__ import annotations

import os
from typing import Any

from langgraph.pregel.remote import RemoteGraph
from langgraph.types import RetryPolicy

from langgraph_supervisor_pro import SupervisorView, Worker, create_supervisor

NO_WAIT = RetryPolicy(max_attempts=2, initial_interval=0.0, jitter=False)


def _route(view: SupervisorView) -> str:
    if view.ledger:
        return "FINISH"
    return "ops" if "roll back" in view.task.lower() else "desk"


def build(url: str) -> Any:
    """The root supervisor (uncompiled) whose `ops` and `desk` are served at `url`."""
    return create_supervisor(
        [
            Worker(
                name="ops",
                description="Operations (remote).",
                agent=RemoteGraph("ops", url=url),
                retry=NO_WAIT,
                timeout=60,
            ),
            Worker(
                name="desk",
                description="The help desk (remote).",
                agent=RemoteGraph("desk", url=url),
                retry=NO_WAIT,
                timeout=60,
            ),
        ],
        router=_route,
    )


root = build(os.environ.get("LGSP_REMOTE_URL", "http://127.0.0.1:9"))
