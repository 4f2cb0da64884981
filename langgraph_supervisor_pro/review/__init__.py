"""Least privilege and human review: tiers, risk, the tool guard, gates and the review desk.

`ReviewPolicy` and `risk` are top level.
Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/concepts/reviews/
"""

from langgraph_supervisor_pro.review._confirm import aconfirm_action, confirm_action
from langgraph_supervisor_pro.review._desk import (
    alist_reviews,
    aresolve_review,
    asweep_reviews,
    list_reviews,
    resolve_review,
    sweep_reviews,
)
from langgraph_supervisor_pro.review._gate import ReviewAnswer, request_review
from langgraph_supervisor_pro.review._guard import ToolGuard
from langgraph_supervisor_pro.review._payload import PendingReview, ReviewRequest
from langgraph_supervisor_pro.review._policy import ConfirmRequest, Tier, decide
from langgraph_supervisor_pro.review._risks import Risk
from langgraph_supervisor_pro.review._server import server_auth

__all__ = [
    "ConfirmRequest",
    "PendingReview",
    "ReviewAnswer",
    "ReviewRequest",
    "Risk",
    "Tier",
    "ToolGuard",
    "aconfirm_action",
    "alist_reviews",
    "aresolve_review",
    "asweep_reviews",
    "confirm_action",
    "decide",
    "list_reviews",
    "request_review",
    "resolve_review",
    "server_auth",
    "sweep_reviews",
]
