"""Where a truncation's dropped messages go: the graph's store (private).

Namespace `("lgsp", "compacted", <thread_id>, *<worker path>)`, key `t<turn>.s<step>.<marker
id>` (from the dropped ids, so a re-run after a crash writes the same item), value
`{"messages": messages_to_dict(...), "removed": n, "error": ..., "at": ...}`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import partial
from typing import Any

from langchain_core.messages import BaseMessage, messages_from_dict, messages_to_dict
from langgraph.store.base import BaseStore

from langgraph_supervisor_pro._internal.storable import storable_value
from langgraph_supervisor_pro._internal.text import store_label
from langgraph_supervisor_pro._internal.twins import Call, Steps
from langgraph_supervisor_pro.compaction._compactor import CompactionOutcome

_log = logging.getLogger("langgraph_supervisor_pro.compaction")


def archive_namespace(thread_id: str, path: Sequence[str]) -> tuple[str, ...]:
    """The store namespace of a worker's dropped messages in one thread.

    Example:
        >>> archive_namespace("t-1", ("ops", "pager"))
        ('lgsp', 'compacted', 't-1', 'ops', 'pager')
    """
    return ("lgsp", "compacted", store_label(thread_id), *(store_label(p) for p in path))


def archive(
    outcome: CompactionOutcome,
    store: BaseStore | None,
    *,
    thread_id: str,
    path: Sequence[str],
    turn: int,
    step: int,
) -> Steps[dict[str, Any] | None]:
    """Write a truncation's dropped messages: `{"namespace": [...], "key": ...}`, or None.

    None when nothing was dropped, there is no store, or the store failed (logged: the
    truncation stands, and the checkpoints still hold the messages).
    """
    marker = outcome.replacement
    if not outcome.truncated or store is None:
        return None
    namespace = archive_namespace(thread_id, path)
    key = f"t{turn:05d}.s{step:05d}.{marker.id if marker is not None else 'x'}"
    value: dict[str, Any] = {
        "messages": storable_value(messages_to_dict(list(outcome.dropped))),
        "removed": len(outcome.dropped),
        "error": outcome.error,
        "at": datetime.now(UTC).isoformat(),
    }
    try:
        yield Call(
            partial(store.put, namespace, key, value, index=False),
            partial(store.aput, namespace, key, value, index=False),
        )
    except Exception as exc:
        _log.warning("compaction: dropped messages not archived (%s: %s)", type(exc).__name__, exc)
        return None
    return {"namespace": list(namespace), "key": key}


def dropped_messages(value: dict[str, Any]) -> list[BaseMessage]:
    """The messages an archived item holds.

    Example:
        ```python
        item = store.get(namespace, key)
        messages = dropped_messages(item.value)
        ```
    """
    return messages_from_dict(value.get("messages") or [])
