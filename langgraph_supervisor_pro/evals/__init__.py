"""Evaluation offline, and the online judge of completed turns.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/evaluation/
"""

from langgraph_supervisor_pro.evals._evaluation import (
    aevaluate,
    answer_traits,
    evaluate,
    route_exact_match,
    routing_f1,
    status_done,
)
from langgraph_supervisor_pro.evals._judge import JudgeVerdict, OnlineJudge
from langgraph_supervisor_pro.evals._judge_queue import (
    aacknowledge_judgement,
    acknowledge_judgement,
    ajudge_reviews,
    judge_reviews,
)

__all__ = [
    "JudgeVerdict",
    "OnlineJudge",
    "aacknowledge_judgement",
    "acknowledge_judgement",
    "aevaluate",
    "ajudge_reviews",
    "answer_traits",
    "evaluate",
    "judge_reviews",
    "route_exact_match",
    "routing_f1",
    "status_done",
]
