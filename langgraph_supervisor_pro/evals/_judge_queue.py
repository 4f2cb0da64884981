"""The online judge's review queue: low-scored turns waiting for a human, in the store.

One item per judged turn under `JUDGE_NAMESPACE`, keyed by its `judge_key`; a score below
the threshold is marked `review="open"`. Acknowledging is a compare-and-set: exactly once
across processes on a Postgres store over a pool (an advisory lock on the key), atomic on an
`InMemoryStore`, within one process only elsewhere (`_internal/item_transaction.py`).
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/evaluation/
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import partial
from typing import Any, Literal

from langgraph.store.base import BaseStore

from langgraph_supervisor_pro._internal.item_transaction import ItemTransaction
from langgraph_supervisor_pro._internal.storable import storable
from langgraph_supervisor_pro._internal.twins import Call, Steps, adrive, drive
from langgraph_supervisor_pro.errors import (
    JudgementAlreadyAcknowledgedError,
    JudgementNotFoundError,
)

JUDGE_NAMESPACE = ("lgsp", "judge")
"""The store namespace of the judge's verdicts (one item per judged turn)."""

ReviewStatus = Literal["open", "acknowledged"]
"""Where a queued verdict stands: waiting for a human, or acknowledged by one."""

_PAGE = 100
_LOCK_CLASS = "lgsp_judge"
"""The advisory lock's class of acknowledgements on Postgres (the key is the item)."""


@dataclass(frozen=True, kw_only=True)
class JudgedTurn:
    """One judged turn as the store keeps it.

    Example:
        >>> item = JudgedTurn.from_value({"key": "t:1", "thread_id": "t", "turn": 1,
        ...                               "score": 0.2, "review": "open"})
        >>> item.score, item.review
        (0.2, 'open')
    """

    key: str
    """The `judge_key` (thread, domain path, turn)."""
    thread_id: str
    turn: int
    path: tuple[str, ...] = ()
    """The domain path, for a judge on a domain of a tree."""
    graph: str = ""
    """The supervisor node's name of the judged graph."""
    judge: str = ""
    """The judge model, as provider/model name."""
    score: float | None = None
    passed: bool | None = None
    reasons: tuple[str, ...] = ()
    threshold: float = 0.5
    error: str | None = None
    task: str = ""
    """The turn's task (cut to a few hundred characters)."""
    answer: str = ""
    """The answer judged (cut to a few thousand characters)."""
    judged_at: str = ""
    """When the judge answered (ISO 8601, UTC)."""
    review: ReviewStatus | None = None
    """None when not queued (the score met the threshold, or the judge failed)."""
    acknowledged_by: str | None = None
    acknowledged_at: str | None = None
    note: str = ""

    @classmethod
    def from_value(cls, value: Mapping[str, Any]) -> JudgedTurn:
        """Read a stored item's value (as the judge step stored it).

        Example:
            >>> JudgedTurn.from_value({"key": "t:2", "thread_id": "t", "turn": 2}).turn
            2
        """
        score = value.get("score")
        return cls(
            key=str(value.get("key", "")),
            thread_id=str(value.get("thread_id", "")),
            turn=int(value.get("turn") or 0),
            path=tuple(str(p) for p in value.get("path") or ()),
            graph=str(value.get("graph") or ""),
            judge=str(value.get("judge") or ""),
            score=float(score) if isinstance(score, int | float) else None,
            passed=value.get("passed") if isinstance(value.get("passed"), bool) else None,
            reasons=tuple(str(r) for r in value.get("reasons") or ()),
            threshold=float(value.get("threshold", 0.5)),
            error=value.get("error"),
            task=str(value.get("task") or ""),
            answer=str(value.get("answer") or ""),
            judged_at=str(value.get("at") or ""),
            review=value.get("review"),
            acknowledged_by=value.get("acknowledged_by"),
            acknowledged_at=value.get("acknowledged_at"),
            note=str(value.get("note") or ""),
        )

    def to_dict(self) -> dict[str, Any]:
        """As JSON data (what `lgsp judge list --json` prints).

        Example:
            >>> JudgedTurn(key="t:1", thread_id="t", turn=1).to_dict()["key"]
            't:1'
        """
        return {**asdict(self), "path": list(self.path), "reasons": list(self.reasons)}


def _check_store(store: object) -> BaseStore:
    if not isinstance(store, BaseStore):
        raise TypeError(
            f"store: got {type(store).__name__}; give the LangGraph store the graph was "
            "compiled with (e.g. from open_store(URL))"
        )
    return store


def _status_filter(status: ReviewStatus | Literal["all"]) -> list[str]:
    if status not in ("open", "acknowledged", "all"):
        raise ValueError(f"status: got {status!r}; give 'open', 'acknowledged' or 'all'")
    return ["open", "acknowledged"] if status == "all" else [status]


def _listing(store: BaseStore, statuses: list[str]) -> Steps[list[JudgedTurn]]:
    items: list[JudgedTurn] = []
    for status in statuses:
        offset = 0
        while True:
            query: dict[str, Any] = {"filter": {"review": status}, "limit": _PAGE, "offset": offset}
            page = yield Call(
                partial(store.search, JUDGE_NAMESPACE, **query),
                partial(store.asearch, JUDGE_NAMESPACE, **query),
            )
            items.extend(JudgedTurn.from_value(item.value) for item in page)
            if len(page) < _PAGE:
                break
            offset += _PAGE
    return sorted(items, key=lambda i: (i.judged_at, i.key))


def judge_reviews(
    store: BaseStore, *, status: ReviewStatus | Literal["all"] = "open"
) -> list[JudgedTurn]:
    """The queued verdicts (scores below their threshold) in the graph's store, oldest first.

    `status` is "open" (waiting for a human, the default), "acknowledged" or "all".

    Raises:
        TypeError: `store` is not a LangGraph store.
        ValueError: An unknown `status`.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> judge_reviews(InMemoryStore())
        []
    """
    return drive(_listing(_check_store(store), _status_filter(status)))


async def ajudge_reviews(
    store: BaseStore, *, status: ReviewStatus | Literal["all"] = "open"
) -> list[JudgedTurn]:
    """`judge_reviews` on the event loop (the store's async methods).

    Example:
        ```python
        items = await ajudge_reviews(store, status="all")
        ```
    """
    return await adrive(_listing(_check_store(store), _status_filter(status)))


def _acknowledged(
    key: str, by: str, note: str, stored: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, JudgedTurn]:
    """The compare-and-set: the stored value, acknowledged, if it is still open."""
    if stored is None or stored.get("review") not in ("open", "acknowledged"):
        raise JudgementNotFoundError(key)
    current = JudgedTurn.from_value(stored)
    if current.review == "acknowledged":
        raise JudgementAlreadyAcknowledgedError(
            key, by=current.acknowledged_by, at=current.acknowledged_at
        )
    value = {
        **stored,
        "review": "acknowledged",
        "acknowledged_by": storable(by.strip()),
        "acknowledged_at": datetime.now(UTC).isoformat(),
        "note": storable(note),
    }
    return value, JudgedTurn.from_value(value)


def _acknowledging(store: BaseStore, key: str, by: str, note: str) -> Steps[JudgedTurn]:
    if not isinstance(key, str) or not key:
        raise ValueError("key: give the key of a queued judgement (lgsp judge list shows them)")
    if not isinstance(by, str) or not by.strip():
        raise ValueError("by: name who acknowledges the judgement (e.g. by='alice')")
    if not isinstance(note, str):
        raise TypeError(f"note: got {type(note).__name__}; give a string")
    done: JudgedTurn = yield ItemTransaction(
        store,
        JUDGE_NAMESPACE,
        key,
        partial(_acknowledged, key, by, note),
        lock=(_LOCK_CLASS, key),
    )
    return done


def acknowledge_judgement(store: BaseStore, key: str, *, by: str, note: str = "") -> JudgedTurn:
    """Mark the queued verdict `key` (as `lgsp judge list` shows it) as seen by a human.

    Records who (`by`), when and a `note`, and returns the verdict as now stored. Of two
    acknowledgements at once, in any processes, one succeeds on a Postgres store over a
    pool (`open_store`); see the module for other stores.

    Raises:
        JudgementNotFoundError: No queued verdict has this key.
        JudgementAlreadyAcknowledgedError: It was already acknowledged (its `by` and `at`
            say by whom and when).
        ValueError: An empty `key` or `by`.
        TypeError: `store` is not a LangGraph store, or `note` is not a string.

    Example:
        ```python
        acknowledge_judgement(store, "order-7:1", by="alice", note="Refund re-checked.")
        ```
    """
    return drive(_acknowledging(_check_store(store), key, by, note))


async def aacknowledge_judgement(
    store: BaseStore, key: str, *, by: str, note: str = ""
) -> JudgedTurn:
    """`acknowledge_judgement` on the event loop (the store's async methods).

    Example:
        ```python
        await aacknowledge_judgement(store, "order-7:1", by="alice")
        ```
    """
    return await adrive(_acknowledging(_check_store(store), key, by, note))
