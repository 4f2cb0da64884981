"""Offline evaluation on real graphs: the support_desk template's offline graph and a small team."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import RetryPolicy, interrupt
from langsmith import Client

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.cli._demo import load_desk
from langgraph_supervisor_pro.observability import (
    Case,
    RunOutput,
    Score,
    aevaluate,
    answer_traits,
    compute_metrics,
    dataset_cases,
    evaluate,
    langsmith_cases,
    read_threads,
    route_exact_match,
    status_done,
)
from langgraph_supervisor_pro.review import ReviewPolicy

NO_WAIT = RetryPolicy(max_attempts=1)
ALL = [answer_traits, route_exact_match, status_done]


def _leaf(name: str) -> Worker:
    def work(task: WorkerTask) -> str:
        return f"{name} handled it."

    return Worker(name=name, description=f"The {name} specialist.", agent=work, retry=NO_WAIT)


def _router(view: SupervisorView) -> str:
    """Decides from the task and the hops so far (never from call order)."""
    first = "billing" if "refund" in view.task else "tech"
    plan = [first, "writer"]
    return plan[len(view.ledger)] if len(view.ledger) < len(plan) else "FINISH"


def _team() -> Any:
    return create_supervisor([_leaf("billing"), _leaf("tech"), _leaf("writer")], router=_router)


LABELLED = [
    Case(id="refund", input="Please refund order A1", expected_routes=["billing", "writer"]),
    Case(id="crash", input="The app crashes", expected_routes=["tech", "writer"]),
    # Labelled billing, but the router sends it to tech: one wrong route.
    Case(id="charge", input="I was charged twice", expected_routes=["billing", "writer"]),
]


def test_routing_precision_recall_f1_for_a_labelled_set_with_one_wrong_route() -> None:
    saver = InMemorySaver()
    report = evaluate(_team(), LABELLED, ALL, checkpointer=saver, thread_prefix="team")
    assert [r.output.routes for r in report.cases] == [
        ("billing", "writer"),
        ("tech", "writer"),
        ("tech", "writer"),
    ]
    routing = report.routing
    assert routing is not None
    scores = {s.worker: s for s in routing.per_worker}
    # billing: 1 right, 1 missed; tech: 1 right, 1 extra; writer: 3 right.
    assert (scores["billing"].precision, scores["billing"].recall) == (1.0, 0.5)
    assert (scores["tech"].precision, scores["tech"].recall) == (0.5, 1.0)
    assert (scores["writer"].precision, scores["writer"].recall) == (1.0, 1.0)
    assert routing.micro_precision == pytest.approx(5 / 6)
    assert routing.micro_recall == pytest.approx(5 / 6)
    assert routing.micro_f1 == pytest.approx(5 / 6)
    assert (routing.labelled, routing.exact_matches, routing.missing) == (3, 2, ())
    # The same figures `lgsp metrics --expected` computes from the saver's checkpoints.
    expected = {f"team-{i}": c.expected_routes for i, c in enumerate(LABELLED)}
    from_db = compute_metrics(read_threads(saver), expected=expected).routing
    assert from_db == routing
    exact = {r.case.id: r.scores for r in report.cases}
    assert [s.name for s in exact["charge"]] == ["route_exact_match", "status_done"]
    assert exact["charge"][0] == Score(
        name="route_exact_match",
        value=0.0,
        passed=False,
        comment="ran ['tech', 'writer'], expected ['billing', 'writer']",
    )
    summary = {s.name: s for s in report.scorers}
    assert (summary["route_exact_match"].count, summary["route_exact_match"].passed) == (3, 2)
    assert summary["route_exact_match"].mean == pytest.approx(2 / 3)
    assert (summary["status_done"].count, summary["status_done"].passed) == (3, 3)
    # No case has answer traits: the scorer applied to none.
    assert (summary["answer_traits"].count, summary["answer_traits"].mean) == (0, None)
    assert report.outcomes == {"completed": 3, "interrupted": 0, "error": 0}
    assert report.passed == 2
    data = report.to_dict()
    json.dumps(data)
    assert data["routing"]["micro_f1"] == round(5 / 6, 6)
    assert data["cases"][2]["passed"] is False


def test_unlabelled_cases_have_no_routing() -> None:
    report = evaluate(_team(), [{"input": "The app crashes"}], [route_exact_match])
    assert report.routing is None
    assert report.cases[0].scores == ()
    assert report.to_dict()["routing"] is None


def test_the_desk_scored_with_answer_traits_and_reviews_left_interrupted() -> None:
    desk = load_desk()
    refund, crash, _ = desk.conversation
    cases = [
        Case(
            id="refund",
            input=refund,
            expected_routes=["billing"],
            must_include=["refunded", "A1001"],
        ),
        Case(
            id="crash",
            input=crash,
            expected_routes=["tech_support"],
            must_include=["Update the app", "a promise"],
            pattern=r"\bcache\b",
            check=lambda answer: "refund" not in answer,
        ),
    ]
    report = evaluate(desk.graph, cases, ALL)
    paused, crashed = report.cases
    assert paused.output.outcome == "interrupted"
    assert paused.output.status == "running"
    assert paused.output.interrupts[0]["action_requests"][0]["name"] == "refund"
    assert paused.output.approved_reviews == 0
    assert [(s.name, s.passed) for s in paused.scores] == [
        ("answer_traits", False),
        ("route_exact_match", False),
        ("status_done", False),
    ]
    assert paused.scores[2].comment == "outcome interrupted, status running"
    assert crashed.output.outcome == "completed"
    assert crashed.output.routes == ("tech_support",)
    traits = crashed.scores[0]
    # Met: "Update the app", the pattern; missed: "a promise", the check (it mentions refund).
    assert traits == Score(
        name="answer_traits", value=0.5, passed=False, comment="missing: 'a promise', check"
    )
    assert report.outcomes == {"completed": 1, "interrupted": 1, "error": 0}
    assert report.routing is not None
    # The paused run has not recorded its billing hop yet: a missed expected route.
    billing = next(s for s in report.routing.per_worker if s.worker == "billing")
    assert (billing.true_positives, billing.false_negatives) == (0, 1)


def test_the_desk_with_reviews_approved() -> None:
    desk = load_desk()
    case = Case(
        id="refund",
        input=desk.conversation[0],
        expected_routes=["billing"],
        must_include=["refunded 29.00", "A1001"],
    )
    report = evaluate(desk.graph, [case], ALL, reviews="approve", reviewer="qa-bot")
    (result,) = report.cases
    assert result.output.outcome == "completed"
    assert result.output.approved_reviews == 1
    assert result.output.routes == ("billing",)
    assert all(s.passed for s in result.scores), result.scores
    reviews = result.output.values["reviews"]
    assert [(r["reviewer"], r["decision"]) for r in reviews] == [("qa-bot", "approve")]
    assert report.routing is not None and report.routing.micro_f1 == 1.0


def _manual_team() -> Any:
    return create_supervisor(
        [_leaf("billing"), _leaf("tech"), _leaf("writer")],
        router=_router,
        review=ReviewPolicy(review_timeout=900),
    )


MANUAL = {"configurable": {"autonomy": "manual"}}


@pytest.mark.parametrize("run", ["sync", "async"])
def test_every_dispatch_review_approved_up_to_max_reviews(run: str) -> None:
    def go(**kwargs: Any) -> Any:
        if run == "sync":
            return evaluate(_manual_team(), LABELLED[:1], ALL, config=MANUAL, **kwargs)
        return asyncio.run(aevaluate(_manual_team(), LABELLED[:1], ALL, config=MANUAL, **kwargs))

    (done,) = go(reviews="approve").cases
    assert done.output.outcome == "completed" and done.output.approved_reviews == 2
    assert done.output.routes == ("billing", "writer")
    assert [r["action"] for r in done.output.values["reviews"]] == [
        "dispatch:billing",
        "dispatch:writer",
    ]
    (capped,) = go(reviews="approve", max_reviews=1).cases
    assert capped.output.outcome == "interrupted" and capped.output.approved_reviews == 1
    assert capped.output.error == "still paused after approving 1 reviews (max_reviews)"
    assert capped.output.routes == ("billing",)
    (left,) = go().cases
    assert left.output.outcome == "interrupted" and left.output.approved_reviews == 0
    assert left.output.interrupts[0]["action_requests"][0]["name"] == "dispatch:billing"


def _plain(node: Any) -> StateGraph[Any, Any, Any, Any]:
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(MessagesState)
    builder.add_node("answer", node)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder


def _explodes(state: MessagesState) -> dict[str, Any]:
    text = str(state["messages"][-1].content)
    if "explode" in text:
        raise RuntimeError("the answer node broke")
    return {"messages": [AIMessage(f"echo: {text}")]}


def test_a_case_that_raises_is_recorded_and_the_others_run() -> None:
    cases = [
        Case(id="bad", input="please explode", must_include=["echo"]),
        Case(id="good", input="hello", must_include=["echo: hello"]),
    ]
    report = evaluate(_plain(_explodes), cases, ALL)
    bad, good = report.cases
    assert bad.output.outcome == "error"
    assert bad.output.error == "RuntimeError: the answer node broke"
    assert bad.output.answer is None
    assert not bad.passed
    assert good.output.outcome == "completed" and good.output.answer == "echo: hello"
    assert good.scores[0].passed
    # A graph without a `status` channel: status_done fails, saying why.
    assert good.scores[1].comment == "outcome completed, status None"
    assert report.outcomes == {"completed": 1, "interrupted": 0, "error": 1}
    assert report.to_dict()["cases"][0]["output"]["error"] == "RuntimeError: the answer node broke"


class _UnreadableThread(InMemorySaver):
    """An in-memory saver that cannot read back the threads whose id ends with `-1`."""

    def get_tuple(self, config: Any) -> Any:
        if str(config["configurable"]["thread_id"]).endswith("-1"):
            raise OSError("disk read error")
        return super().get_tuple(config)


@pytest.mark.parametrize("run", ["sync", "async"])
def test_a_thread_that_cannot_be_read_is_an_error_and_missing_from_routing(run: str) -> None:
    saver = _UnreadableThread()
    if run == "sync":
        report = evaluate(_team(), LABELLED[:2], [status_done], checkpointer=saver)
    else:
        report = asyncio.run(aevaluate(_team(), LABELLED[:2], checkpointer=saver))
    ok, unreadable = report.cases
    assert ok.output.outcome == "completed"
    assert unreadable.output.outcome == "error"
    assert unreadable.output.error == "OSError: disk read error"
    assert (unreadable.output.status, unreadable.output.values) == (None, {})
    assert report.routing is not None
    assert report.routing.missing == (unreadable.output.thread_id,)
    assert report.routing.labelled == 1


def _asks(state: MessagesState) -> dict[str, Any]:
    reply = interrupt("which order?")
    return {"messages": [AIMessage(f"order {reply}")]}


@pytest.mark.parametrize("reviews", ["interrupt", "approve"])
def test_a_pause_that_is_not_a_review_stays_interrupted(reviews: Any) -> None:
    report = evaluate(_plain(_asks), [Case(input="refund me")], [status_done], reviews=reviews)
    (result,) = report.cases
    assert result.output.outcome == "interrupted"
    assert result.output.interrupts == ("which order?",)
    if reviews == "approve":
        assert result.output.error is not None
        assert result.output.error.startswith("cannot approve the pause: ")
    else:
        assert result.output.error is None


def test_scorers_that_raise_or_return_junk_fail_with_a_comment() -> None:
    def broken(case: Case, output: RunOutput) -> Score:
        raise KeyError("nope")

    def junk(case: Case, output: RunOutput) -> Any:
        return 0.9

    report = evaluate(_plain(_explodes), [Case(input="hi")], [broken, junk])
    assert report.cases[0].scores == (
        Score(name="broken", value=0.0, passed=False, comment="scorer raised KeyError: 'nope'"),
        Score(
            name="junk",
            value=0.0,
            passed=False,
            comment="scorer returned float; it must return a Score or None",
        ),
    )


def test_a_check_that_raises_is_a_missed_trait() -> None:
    def check(answer: str) -> bool:
        raise ValueError("bad check")

    case = Case(input="hi", check=check)
    out = RunOutput(thread_id="t", outcome="completed", status="done", answer="x")
    score = answer_traits(case, out)
    assert score is not None
    assert (score.value, score.comment) == (0.0, "missing: check raised ValueError: bad check")


def test_a_compiled_graph_and_the_given_checkpointer() -> None:
    saver = InMemorySaver()
    compiled = _team().compile(checkpointer=saver)
    report = evaluate(compiled, LABELLED[:1], [status_done], thread_prefix="run")
    assert report.cases[0].output.thread_id == "run-0"
    assert compiled.get_state({"configurable": {"thread_id": "run-0"}}).values["status"] == "done"
    with pytest.raises(ValueError, match=r"^checkpointer: the graph is already compiled"):
        evaluate(compiled, LABELLED, checkpointer=InMemorySaver())
    with pytest.raises(ValueError, match=r"^graph: compiled without a checkpointer"):
        evaluate(_team().compile(), LABELLED)
    with pytest.raises(ValueError, match=r"^graph: got str"):
        evaluate("team", LABELLED)  # type: ignore[arg-type]


def test_fresh_threads_per_evaluation() -> None:
    compiled = _team().compile(checkpointer=InMemorySaver())
    first = evaluate(compiled, LABELLED[:1])
    second = evaluate(compiled, LABELLED[:1])
    assert first.cases[0].output.thread_id != second.cases[0].output.thread_id
    assert second.cases[0].output.routes == ("billing", "writer")


def test_aevaluate_runs_cases_concurrently_within_the_limit() -> None:
    running = 0
    peak = 0

    async def slow(task: WorkerTask) -> str:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.05)
        running -= 1
        return "done slowly"

    def router(view: SupervisorView) -> str:
        return "FINISH" if view.ledger else "slow"

    builder = create_supervisor(
        [Worker(name="slow", description="Slow.", agent=slow, retry=NO_WAIT)], router=router
    )
    cases = [Case(input=f"task {i}", expected_routes=["slow"]) for i in range(5)]
    report = asyncio.run(aevaluate(builder, cases, [route_exact_match], max_concurrency=2))
    assert peak == 2
    assert [r.case.id for r in report.cases] == [f"case-{i}" for i in range(5)]
    assert report.outcomes["completed"] == 5
    assert report.routing is not None and report.routing.exact_matches == 5
    peak = 0
    asyncio.run(aevaluate(builder, cases, max_concurrency=1))
    assert peak == 1


def test_aevaluate_records_errors_and_approves_reviews() -> None:
    desk = load_desk()
    errors = asyncio.run(aevaluate(_plain(_explodes), [Case(input="explode")]))
    assert errors.cases[0].output.outcome == "error"
    approved = asyncio.run(
        aevaluate(desk.graph, [Case(input=desk.conversation[0])], [status_done], reviews="approve")
    )
    assert approved.cases[0].output.approved_reviews == 1
    assert approved.cases[0].scores[0].passed
    left = asyncio.run(aevaluate(_plain(_asks), [Case(input="x")], reviews="approve"))
    assert left.cases[0].output.outcome == "interrupted"
    assert (left.cases[0].output.error or "").startswith("cannot approve the pause: ")


def test_messages_input() -> None:
    report = evaluate(_plain(_explodes), [Case(input=[("user", "hi"), ("user", "again")])])
    assert report.cases[0].output.answer == "echo: again"


@pytest.mark.parametrize(
    ("dataset", "message"),
    [
        ([], r"^dataset: empty"),
        (42, r"^dataset: got int"),
        ([42], r"^dataset\[0\]: got int"),
        ([{"text": "hi"}], r"^dataset\[0\]: unknown keys \['text'\]"),
        ([{"id": "x"}], r"^dataset\[0\]\.input: missing"),
        ([{"input": ""}], r"^dataset\[0\]\.input: empty text"),
        ([{"input": []}], r"^dataset\[0\]\.input: got \[\]"),
        ([{"input": [42]}], r"^dataset\[0\]\.input\[0\]: got 42"),
        (
            [{"input": "hi", "expected_routes": "billing"}],
            r"^dataset\[0\]\.expected_routes: got str",
        ),
        ([{"input": "hi", "expected_routes": ["a", ""]}], r"^dataset\[0\]\.expected_routes\[1\]"),
        ([{"input": "hi", "must_include": "x"}], r"^dataset\[0\]\.must_include: got str"),
        ([{"input": "hi", "must_include": [1]}], r"^dataset\[0\]\.must_include\[0\]"),
        ([{"input": "hi", "pattern": "("}], r"^dataset\[0\]\.pattern: not a regular expression"),
        ([{"input": "hi", "check": "yes"}], r"^dataset\[0\]\.check: got 'yes'"),
        ([{"input": "hi", "metadata": 3}], r"^dataset\[0\]\.metadata: got int"),
        ([{"input": "hi", "id": ""}], r"^dataset\[0\]\.id: got ''"),
        ([{"input": "a", "id": "x"}, {"input": "b", "id": "x"}], r"^dataset\[1\]\.id: 'x' is used"),
    ],
)
def test_dataset_validation_names_the_field(dataset: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        dataset_cases(dataset)
    with pytest.raises(ValueError, match=message):
        evaluate(_team(), dataset)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"scorers": "status_done"}, r"^scorers: got str"),
        ({"scorers": [status_done, 3]}, r"^scorers\[1\]: got 3"),
        ({"reviews": "reject"}, r"^reviews: got 'reject'"),
        ({"reviewer": ""}, r"^reviewer: got ''"),
        ({"max_reviews": 0}, r"^max_reviews: got 0"),
        ({"thread_prefix": ""}, r"^thread_prefix: got ''"),
    ],
)
def test_settings_validation_names_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(_team(), LABELLED, **kwargs)


@pytest.mark.parametrize("limit", [0, True, 1.5])
def test_max_concurrency_validation(limit: Any) -> None:
    with pytest.raises(ValueError, match=r"^max_concurrency: got"):
        asyncio.run(aevaluate(_team(), LABELLED, max_concurrency=limit))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": "", "value": 1, "passed": True}, r"^name: got ''"),
        ({"name": "s", "value": 1.5, "passed": True}, r"^value: got 1.5"),
        ({"name": "s", "value": True, "passed": True}, r"^value: got True"),
        ({"name": "s", "value": 1, "passed": 1}, r"^passed: got 1"),
    ],
)
def test_score_validation_names_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Score(**kwargs)


# ----------------------------------------------------------------------- LangSmith datasets


STAMP = "2030-01-01T00:00:00Z"


class _LangSmith:
    """A loopback HTTP server answering the LangSmith API calls `list_examples` makes."""

    def __init__(self, datasets: dict[str, list[dict[str, Any]]]) -> None:
        self.ids = {name: str(uuid.uuid4()) for name in datasets}
        self.examples = {self.ids[name]: rows for name, rows in datasets.items()}
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = parse_qs(url.query)
                owner.paths.append(url.path)
                body: Any = {}
                if url.path == "/datasets":
                    name = query.get("name", [""])[0]
                    body = (
                        [{"id": owner.ids[name], "name": name, "created_at": STAMP}]
                        if name in owner.ids
                        else []
                    )
                elif url.path == "/examples":
                    dataset = query["dataset"][0]
                    rows = [] if int(query["offset"][0]) else owner.examples[dataset]
                    body = [
                        {
                            "id": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{dataset}/{i}")),
                            "dataset_id": dataset,
                            "created_at": STAMP,
                            "modified_at": STAMP,
                            **row,
                        }
                        for i, row in enumerate(rows)
                    ]
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def client(self) -> Client:
        return Client(
            api_url=f"http://127.0.0.1:{self.server.server_port}",
            api_key="offline-test",
            auto_batch_tracing=False,
        )


@pytest.fixture
def langsmith() -> Iterator[_LangSmith]:
    server = _LangSmith(
        {
            "team-routing": [
                {
                    "inputs": {"input": "Please refund order A1"},
                    "outputs": {"expected_routes": ["billing", "writer"], "answer": "unused"},
                    "metadata": {"source": "tickets"},
                },
                {
                    "inputs": {"messages": [{"role": "user", "content": "I was charged twice"}]},
                    "outputs": {"expected_routes": ["billing", "writer"]},
                },
                {
                    "inputs": {"input": "The app crashes"},
                    "outputs": {"expected_routes": ["tech", "writer"], "must_include": ["tech"]},
                },
            ],
            "no-input": [{"inputs": {"question": "hi"}, "outputs": None}],
            "bad-routes": [{"inputs": {"input": "hi"}, "outputs": {"expected_routes": "billing"}}],
            "empty": [],
        }
    )
    thread = threading.Thread(
        target=server.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()


def test_a_langsmith_dataset_by_name(langsmith: _LangSmith) -> None:
    client = langsmith.client()
    cases = langsmith_cases(client, "team-routing")
    assert [c.expected_routes for c in cases] == [
        ("billing", "writer"),
        ("billing", "writer"),
        ("tech", "writer"),
    ]
    assert cases[0].metadata == {"source": "tickets", "langsmith_example_id": cases[0].id}
    assert cases[2].must_include == ("tech",)
    report = evaluate(_team(), "team-routing", ALL, client=client)
    assert [r.case.id for r in report.cases] == [c.id for c in cases]
    assert report.routing is not None
    assert report.routing.micro_f1 == pytest.approx(5 / 6)
    assert report.routing.exact_matches == 2
    areport = asyncio.run(aevaluate(_team(), "team-routing", ALL, client=client))
    assert areport.routing == report.routing
    assert "/examples" in langsmith.paths


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("missing", r"^dataset: cannot read the LangSmith dataset 'missing': "),
        ("empty", r"^empty: empty; give at least one case"),
        ("no-input", r"^no-input\[0\]\.inputs: has \['question'\]"),
        ("bad-routes", r"^bad-routes\[0\]\.expected_routes: got str"),
        ("", r"^dataset: got ''"),
    ],
)
def test_langsmith_dataset_errors_name_the_field(
    langsmith: _LangSmith, name: str, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(_team(), name, client=langsmith.client())


def test_a_dataset_name_needs_a_client_and_a_client_a_name(langsmith: _LangSmith) -> None:
    with pytest.raises(ValueError, match=r"^dataset: got the name 'team-routing' without client="):
        evaluate(_team(), "team-routing")
    with pytest.raises(ValueError, match=r"^client: only used with a LangSmith dataset name"):
        evaluate(_team(), LABELLED, client=langsmith.client())
