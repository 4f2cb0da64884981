"""The support desk graph: a triage supervisor over `billing`, `tech_support` and `account`.

- `billing` looks orders up (`lookup_order`, low risk: runs in every tier) and refunds
  them (`refund`, high risk: a human reviews it unless the tier is `autonomous`).
- `tech_support` troubleshoots problems; `account` changes account details.
- The autonomy tier comes from configuration: `LGSP_AUTONOMY` / `LGSP_POLICY_FILE` for the
  deployment (`ReviewPolicy.from_env`), `configurable.autonomy` for one run.

Models: with `LGSP_MODEL` set (`provider:model`, e.g. `openai:gpt-4.1-mini`) every role
uses it through `init_chat_model`; `LGSP_SUPERVISOR_MODEL`, `LGSP_BILLING_MODEL`,
`LGSP_TECH_SUPPORT_MODEL` and `LGSP_ACCOUNT_MODEL` override it per role. Without it the
desk runs offline: the supervisor is a keyword router and the workers' chat models are
scripted; each decides only from what it is shown, so one server serves any number of runs.

`graph` is uncompiled: `langgraph dev` (or your code) supplies the checkpointer and store.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import StateGraph
from langgraph_supervisor_pro import ReviewPolicy, SupervisorView, Worker, create_supervisor
from langgraph_supervisor_pro.testing import ScriptedCall, ScriptedChatModel

ORDERS: dict[str, dict[str, Any]] = {
    "A1001": {"item": "Pro plan, monthly", "amount": 29.0, "currency": "EUR", "charges": 2},
    "A1002": {"item": "Team plan, yearly", "amount": 480.0, "currency": "EUR", "charges": 1},
}
"""The demo's order book; replace `lookup_order` and `refund` with your systems."""

_ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")


@tool
def lookup_order(order_id: str) -> str:
    """Look an order up: its item, amount and how many times it was charged.

    Args:
        order_id: The order number, e.g. "A1001".
    """
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return json.dumps({"order_id": order_id, "error": "no such order"})
    return json.dumps({"order_id": order_id.upper(), **order})


@tool
def refund(order_id: str, amount: float, reason: str) -> str:
    """Refund an amount of an order to the customer's card.

    Args:
        order_id: The order number, e.g. "A1001".
        amount: The amount to refund, in the order's currency.
        reason: Why, in a few words.
    """
    return f"refunded {amount:.2f} on order {order_id.upper()} ({reason})"


# --------------------------------------------------------------------------- offline models

_BILLING_WORDS = ("charge", "refund", "invoice", "bill", "payment", "paid")
_ACCOUNT_WORDS = ("email", "password", "account", "username", "address", "profile")


def triage(view: SupervisorView) -> str:
    """The offline supervisor: one worker by keyword, then FINISH.

    Args:
        view: What the supervisor sees: the task and this turn's ledger.

    Returns:
        A worker name, or "FINISH" once a worker has answered.

    Example:
        >>> from langgraph_supervisor_pro import SupervisorView
        >>> triage(SupervisorView(task="Refund order A1001", step=0, turn=1, ledger=(),
        ...                       visits={}, workers=("billing",)))
        'billing'
    """
    if view.ledger:
        return "FINISH"
    text = view.task.lower()
    if any(word in text for word in _BILLING_WORDS):
        return "billing"
    if any(word in text for word in _ACCOUNT_WORDS):
        return "account"
    return "tech_support"


def _this_hop(messages: Sequence[BaseMessage]) -> Sequence[BaseMessage]:
    """The messages since the last human message (this hop's; earlier turns are history)."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    return messages[starts[-1] :] if starts else messages


def _call(name: str, args: dict[str, Any], index: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"{name}_{index}"}])


def billing_reply(call: ScriptedCall) -> AIMessage:
    """The offline billing model: look the order up, refund a duplicate charge, report.

    Args:
        call: The model call: the messages the billing agent was shown.

    Returns:
        The next tool call, or the answer.
    """
    hop = _this_hop(call.messages)
    asked = " ".join(m.text for m in hop if isinstance(m, HumanMessage))
    results = [m for m in hop if isinstance(m, ToolMessage)]
    if not results:
        found = _ORDER_ID.search(asked.upper())
        if found is None:
            return AIMessage(content="Which order is it about? I need the order number.")
        return _call("lookup_order", {"order_id": found.group()}, call.index)
    last = results[-1]
    if last.name == "lookup_order":
        order = json.loads(last.text)
        if "error" in order:
            return AIMessage(content=f"I could not find order {order['order_id']}.")
        if order["charges"] > 1 and "refund" in asked.lower():
            return _call(
                "refund",
                {
                    "order_id": order["order_id"],
                    "amount": order["amount"],
                    "reason": "duplicate charge",
                },
                call.index,
            )
        return AIMessage(
            content=(
                f"Order {order['order_id']} ({order['item']}) was charged "
                f"{order['charges']} time(s), {order['amount']:.2f} {order['currency']} each."
            )
        )
    if last.status == "error" or "rejected" in last.text:
        return AIMessage(
            content=(
                "I'm sorry: the refund was not approved, so nothing was refunded. "
                "A colleague will look at your order and get back to you."
            )
        )
    return AIMessage(content=f"Done: {last.text}. It reaches your card in 3-5 business days.")


def tech_support_reply(call: ScriptedCall) -> AIMessage:
    """The offline tech support model: first-line troubleshooting steps."""
    return AIMessage(
        content=(
            "Sorry about the trouble. Please sign out and in again, clear the app's cache and "
            "update to the latest version; if it still fails, reply with the error message."
        )
    )


def account_reply(call: ScriptedCall) -> AIMessage:
    """The offline account model: how an account detail is changed."""
    return AIMessage(
        content=(
            "To change your email, open Settings > Account > Email, enter the new address and "
            "confirm the link we send to it; the old address gets a notice."
        )
    )


def _scripted(reply: Callable[[ScriptedCall], AIMessage]) -> BaseChatModel:
    # Replies depend only on the messages shown, so the script never needs to end.
    return ScriptedChatModel(script=[reply] * 10_000)


# --------------------------------------------------------------------------- the graph

ROLES = ("supervisor", "billing", "tech_support", "account")
"""The roles whose model `LGSP_<ROLE>_MODEL` can set."""


def model_for(role: str, environ: Mapping[str, str] = os.environ) -> BaseChatModel | None:
    """The configured model of a role, or None to run it offline.

    Args:
        role: One of `ROLES`.
        environ: Where `LGSP_<ROLE>_MODEL` and `LGSP_MODEL` are read.

    Returns:
        `init_chat_model` of `LGSP_<ROLE>_MODEL`, else of `LGSP_MODEL`, else None.

    Example:
        >>> model_for("billing", {}) is None
        True
    """
    name = environ.get(f"LGSP_{role.upper()}_MODEL", "").strip()
    name = name or environ.get("LGSP_MODEL", "").strip()
    if not name:
        return None
    from langchain.chat_models import init_chat_model

    return init_chat_model(name)


def build_graph(environ: Mapping[str, str] = os.environ) -> StateGraph[Any, Any, Any, Any]:
    """The support desk, uncompiled.

    Args:
        environ: The configuration: models (`LGSP_MODEL`, ...) and review policy
            (`LGSP_AUTONOMY`, `LGSP_POLICY_FILE`).

    Returns:
        The graph; compile it with a checkpointer (reviews pause and resume).

    Example:
        >>> build_graph({}).compile().name
        'LangGraph'
    """
    policy = ReviewPolicy.from_env(environ)
    billing = Worker(
        name="billing",
        description="Charges, invoices and refunds: looks orders up and refunds them.",
        model=model_for("billing", environ) or _scripted(billing_reply),
        tools=(lookup_order, refund),
        risks={"lookup_order": "low", "refund": "high"},
        prompt=(
            "You are the billing desk. Look the order up before anything else; refund only "
            "a charge the order shows was taken twice, never more than one charge."
        ),
    )
    tech_support = Worker(
        name="tech_support",
        description="Technical problems: errors, crashes, sign-in and sync trouble.",
        model=model_for("tech_support", environ) or _scripted(tech_support_reply),
        prompt="You are technical support. Give clear, numbered troubleshooting steps.",
    )
    account = Worker(
        name="account",
        description="Account details: email, password, profile and address changes.",
        model=model_for("account", environ) or _scripted(account_reply),
        prompt="You are the account desk. Explain how to change the detail asked about.",
    )
    supervisor = model_for("supervisor", environ)
    return create_supervisor(
        [billing, tech_support, account],
        model=supervisor,
        router=None if supervisor is not None else triage,
        review=policy,
        max_steps=6,
        name="support_desk",
    )


graph = build_graph()
"""The graph `langgraph.json` serves."""
