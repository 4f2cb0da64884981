"""Offline evaluation on LangSmith's `evaluate`: our target, scorers and routing figures.

Graphs are real: a small team whose workers answer with scripted models, and the
support_desk template's offline graph (scripted models, a refund that pauses for review).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import uuid
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlparse

import langsmith.utils
import pytest
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import RetryPolicy, interrupt
from langsmith import Client
from langsmith.schemas import Example

from langgraph_supervisor_pro import SupervisorView, Worker, WorkerTask, create_supervisor
from langgraph_supervisor_pro.cli._demo import load_desk
from langgraph_supervisor_pro.evals import (
    aevaluate,
    answer_traits,
    evaluate,
    route_exact_match,
    routing_f1,
    status_done,
)
from langgraph_supervisor_pro.observability import compute_metrics, read_threads
from langgraph_supervisor_pro.review._policy import ReviewPolicy
from langgraph_supervisor_pro.testing import FunctionChatModel, ScriptedCall

NO_WAIT = RetryPolicy(max_attempts=1)
Row = Any  # LangSmith's ExperimentResultRow (a TypedDict)


def _leaf(name: str) -> Worker:
    def reply(call: ScriptedCall) -> str:
        return f"{name} handled it."

    model = FunctionChatModel(name=f"{name}-model", reply=reply)
    return Worker(name=name, description=f"The {name} specialist.", model=model, retry=NO_WAIT)


def _router(view: SupervisorView) -> str:
    """Decides from the task and the hops so far (never from call order)."""
    first = "billing" if "refund" in view.task else "tech"
    plan = [first, "writer"]
    return plan[len(view.ledger)] if len(view.ledger) < len(plan) else "FINISH"


def _team(**kwargs: Any) -> Any:
    workers = [_leaf("billing"), _leaf("tech"), _leaf("writer")]
    return create_supervisor(workers, router=_router, **kwargs)


def _example(text: str, **outputs: Any) -> dict[str, Any]:
    return {"inputs": {"input": text}, "outputs": outputs}


LABELLED = [
    _example("Please refund order A1", expected_routes=["billing", "writer"]),
    _example("The app crashes", expected_routes=["tech", "writer"]),
    # Labelled billing, but the router sends it to tech: one wrong route.
    _example("I was charged twice", expected_routes=["billing", "writer"]),
]


def _scores(row: Row) -> dict[str, tuple[Any, str | None]]:
    return {r.key: (r.score, r.comment) for r in row["evaluation_results"]["results"]}


def _by_input(rows: list[Row]) -> dict[str, Row]:
    return {row["example"].inputs["input"]: row for row in rows}


def _routing(rows: Sequence[Any]) -> dict[str, Any]:
    return routing_f1([r["run"].outputs for r in rows], [r["example"].outputs for r in rows])


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Fail on any connection or name lookup, even from LangSmith's background threads
    (which swallow errors: the attempts are recorded and checked after the test), with
    LangSmith tracing switched on in the environment, the worst case."""
    attempts: list[object] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        attempts.append(args[:2])
        raise OSError("network access in an offline evaluation")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_API_KEY", "not-a-real-key")
    langsmith.utils.get_env_var.cache_clear()  # type: ignore[attr-defined]  # LangSmith caches
    try:
        yield attempts
    finally:
        langsmith.utils.get_env_var.cache_clear()  # type: ignore[attr-defined]
    assert attempts == []


def test_routing_precision_recall_f1_for_a_labelled_set_with_one_wrong_route(
    no_network: list[object],
) -> None:
    saver = InMemorySaver()
    results = evaluate(_team(), LABELLED, checkpointer=saver)
    rows = list(results)
    assert [r["run"].outputs["routes"] for r in rows] == [
        ["billing", "writer"],
        ["tech", "writer"],
        ["tech", "writer"],
    ]
    assert rows[0]["run"].outputs["answer"] == "writer handled it."
    assert rows[0]["run"].outputs["status"] == "done"
    assert [_scores(r)["route_exact_match"][0] for r in rows] == [1.0, 1.0, 0.0]
    assert _scores(rows[2]) == {
        "route_exact_match": (0.0, "ran ['tech', 'writer'], expected ['billing', 'writer']"),
        "status_done": (1.0, None),
    }  # no answer traits: answer_traits gave no result
    summary = _routing(rows)
    precision, recall, f1 = summary["results"]
    assert [precision["key"], recall["key"], f1["key"]] == [
        "routing_precision",
        "routing_recall",
        "routing_f1",
    ]
    assert precision["score"] == pytest.approx(5 / 6)
    assert recall["score"] == pytest.approx(5 / 6)
    assert f1["score"] == pytest.approx(5 / 6)
    assert f1["comment"] == "3 labelled runs, 2 exact, 0 without outputs"
    per_worker = f1["metadata"]
    # billing: 1 right, 1 missed; tech: 1 right, 1 extra; writer: 3 right.
    assert (per_worker["billing"]["precision"], per_worker["billing"]["recall"]) == (1.0, 0.5)
    assert (per_worker["tech"]["precision"], per_worker["tech"]["recall"]) == (0.5, 1.0)
    assert (per_worker["writer"]["tp"], per_worker["writer"]["f1"]) == (3, 1.0)
    json.dumps(summary)
    # The same figures `lgsp metrics --expected` computes from the saver's checkpoints.
    expected = {
        r["run"].outputs["thread_id"]: r["example"].outputs["expected_routes"] for r in rows
    }
    from_db = compute_metrics(read_threads(saver), expected=expected).routing
    assert from_db is not None
    assert (from_db.micro_precision, from_db.micro_recall, from_db.micro_f1) == (
        precision["score"],
        recall["score"],
        f1["score"],
    )
    assert {s.worker: s.recall for s in from_db.per_worker} == {
        w: s["recall"] for w, s in per_worker.items()
    }
    # `evaluate` ran routing_f1 as LangSmith's summary evaluator (read here from
    # LangSmith's own attribute; LangSmith shows it in the experiment when uploaded).
    summarised: list[Any] = results._summary_results["results"]
    keys = {r.key: r.score for r in summarised}
    assert keys == {"routing_precision": 5 / 6, "routing_recall": 5 / 6, "routing_f1": 5 / 6}


def test_each_run_gets_a_fresh_thread_of_a_compiled_graph() -> None:
    compiled = _team().compile(checkpointer=InMemorySaver())
    first = next(iter(evaluate(compiled, LABELLED[:1])))["run"].outputs["thread_id"]
    second = next(iter(evaluate(compiled, LABELLED[:1])))["run"].outputs
    assert first != second["thread_id"] and second["routes"] == ["billing", "writer"]
    state = compiled.get_state({"configurable": {"thread_id": first}})
    assert state.values["status"] == "done"


def test_unlabelled_examples_get_no_routing_result() -> None:
    (row,) = evaluate(_team(), [{"inputs": {"input": "The app crashes"}}])
    assert _scores(row) == {"status_done": (1.0, None)}
    assert _routing([row]) == {"results": []}


def test_the_desk_scored_with_answer_traits_and_a_review_left_paused() -> None:
    desk = load_desk()
    refund, crash, _ = desk.conversation
    data = [
        _example(refund, expected_routes=["billing"], must_include=["refunded", "A1001"]),
        _example(
            crash,
            expected_routes=["tech_support"],
            must_include=["Update the app", "a promise"],
            pattern=r"\bcache\b",
        ),
    ]
    rows = _by_input(list(evaluate(desk.graph, data)))
    paused = rows[refund]["run"].outputs
    assert (paused["status"], paused["approved_reviews"]) == ("running", 0)
    assert paused["interrupts"][0]["action_requests"][0]["name"] == "refund"
    assert _scores(rows[refund]) == {
        "answer_traits": (0.0, "missing: 'refunded', 'A1001'"),
        "route_exact_match": (0.0, "ran [], expected ['billing']"),
        "status_done": (0.0, "status running, paused"),
    }
    crashed = rows[crash]
    assert crashed["run"].outputs["routes"] == ["tech_support"]
    # Met: "Update the app" and the pattern; missed: "a promise".
    assert _scores(crashed)["answer_traits"] == (2 / 3, "missing: 'a promise'")
    # The paused run has not recorded its billing hop yet: a missed expected route.
    (_, _, f1) = _routing(list(rows.values()))["results"]
    assert (f1["metadata"]["billing"]["tp"], f1["metadata"]["billing"]["fn"]) == (0, 1)


def test_the_desk_with_reviews_approved() -> None:
    desk = load_desk()
    data = [
        _example(
            desk.conversation[0],
            expected_routes=["billing"],
            must_include=["refunded 29.00", "A1001"],
        )
    ]
    saver = InMemorySaver()
    (row,) = evaluate(desk.graph, data, reviews="approve", reviewer="qa-bot", checkpointer=saver)
    outputs = row["run"].outputs
    assert (outputs["status"], outputs["approved_reviews"], outputs["interrupts"]) == (
        "done",
        1,
        [],
    )
    assert all(score == 1.0 for score, _ in _scores(row).values()), _scores(row)
    thread = {"configurable": {"thread_id": outputs["thread_id"]}}
    reviews = desk.graph.compile(checkpointer=saver).get_state(thread).values["reviews"]
    assert [(r["reviewer"], r["decision"]) for r in reviews] == [("qa-bot", "approve")]


MANUAL = {"configurable": {"autonomy": "manual"}}


@pytest.mark.parametrize("run", ["sync", "async"])
def test_every_dispatch_review_approved_up_to_max_reviews(run: str) -> None:
    def go(**kwargs: Any) -> dict[str, Any]:
        team = _team(review=ReviewPolicy(review_timeout=900))
        if run == "sync":
            (row,) = evaluate(team, LABELLED[:1], config=MANUAL, **kwargs)
            return dict(row["run"].outputs)

        async def rows() -> list[Row]:
            return [r async for r in await aevaluate(team, LABELLED[:1], config=MANUAL, **kwargs)]

        return dict(asyncio.run(rows())[0]["run"].outputs)

    done = go(reviews="approve")
    assert (done["status"], done["approved_reviews"], done["routes"]) == (
        "done",
        2,
        ["billing", "writer"],
    )
    capped = go(reviews="approve", max_reviews=1)
    assert (capped["approved_reviews"], capped["routes"]) == (1, ["billing"])
    assert capped["review_note"] == "still paused after approving 1 reviews (max_reviews)"
    left = go()
    assert (left["approved_reviews"], left["review_note"]) == (0, None)
    assert left["interrupts"][0]["action_requests"][0]["name"] == "dispatch:billing"


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


ERRORS = [
    _example("please explode", must_include=["echo"], expected_routes=["writer"]),
    _example("hello", must_include=["echo: hello"]),
]


def _check_error_rows(rows: list[Row]) -> None:
    by_input = _by_input(rows)
    bad, good = by_input["please explode"], by_input["hello"]
    assert bad["run"].error.startswith("RuntimeError('the answer node broke')")
    assert _scores(bad) == {
        "answer_traits": (0.0, "missing: 'echo'"),
        "route_exact_match": (0.0, "ran [], expected ['writer']"),
        "status_done": (0.0, "no outputs: the run raised"),
    }
    assert good["run"].error is None
    assert good["run"].outputs["answer"] == "echo: hello"
    # A graph without a `status` channel: status_done fails, saying why.
    assert _scores(good) == {"answer_traits": (1.0, None), "status_done": (0.0, "status None")}
    (_, _, f1) = _routing(rows)["results"]
    assert (f1["score"], f1["comment"]) == (None, "0 labelled runs, 0 exact, 1 without outputs")


def test_a_run_that_raises_is_recorded_and_the_others_run() -> None:
    _check_error_rows(list(evaluate(_plain(_explodes), ERRORS)))


def test_aevaluate_records_a_run_that_raises() -> None:
    async def rows() -> list[Row]:
        return [r async for r in await aevaluate(_plain(_explodes), ERRORS)]

    _check_error_rows(asyncio.run(rows()))


def _asks(state: MessagesState) -> dict[str, Any]:
    reply = interrupt("which order?")
    return {"messages": [AIMessage(f"order {reply}")]}


@pytest.mark.parametrize("reviews", ["interrupt", "approve"])
def test_a_pause_that_is_not_a_review_stays_paused(reviews: Any) -> None:
    (row,) = evaluate(_plain(_asks), [_example("refund me")], reviews=reviews)
    outputs = row["run"].outputs
    assert outputs["interrupts"] == ["which order?"]
    if reviews == "approve":
        assert outputs["review_note"].startswith("cannot approve the pause: ")
    else:
        assert outputs["review_note"] is None


def test_aevaluate_runs_examples_concurrently_within_the_limit(no_network: list[object]) -> None:
    running = peak = 0

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
    data = [_example(f"task {i}", expected_routes=["slow"]) for i in range(5)]

    async def rows(limit: int) -> list[Row]:
        return [r async for r in await aevaluate(builder, data, max_concurrency=limit)]

    done = asyncio.run(rows(2))
    assert peak == 2
    assert sorted(r["example"].inputs["input"] for r in done) == [f"task {i}" for i in range(5)]
    assert all(_scores(r)["route_exact_match"] == (1.0, None) for r in done)
    assert _routing(done)["results"][2]["comment"] == "5 labelled runs, 5 exact, 0 without outputs"
    peak = 0
    asyncio.run(rows(1))
    assert peak == 1


def test_messages_input_and_langsmith_examples() -> None:
    data = [
        {"inputs": {"messages": [("user", "hi"), ("user", "again")]}},
        Example(id=uuid.uuid4(), inputs={"input": "hello"}, outputs={"must_include": ["hello"]}),
    ]
    rows = list(evaluate(_plain(_explodes), data))
    assert [r["run"].outputs["answer"] for r in rows] == ["echo: again", "echo: hello"]
    assert _scores(rows[1])["answer_traits"] == (1.0, None)


def test_the_scorers_work_in_langsmith_evaluate_directly() -> None:
    import langsmith

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        return {"status": "done", "routes": ["billing"], "answer": "Refunded A1001."}

    example = Example(
        id=uuid.uuid4(),
        inputs={"input": "x"},
        outputs={"expected_routes": ["billing"], "pattern": r"A\d+"},
    )
    results = langsmith.evaluate(
        target,
        data=[example],
        evaluators=[answer_traits, route_exact_match, status_done],
        client=Client(auto_batch_tracing=False),
        upload_results=False,
    )
    (row,) = results
    assert _scores(row) == {
        "answer_traits": (1.0, None),
        "route_exact_match": (1.0, None),
        "status_done": (1.0, None),
    }


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], r"^data: got \[\]"),
        (42, r"^data: got 42"),
        ([42], r"^data\[0\]: got int"),
        ([{"input": "hi"}], r"^data\[0\]: unknown keys \['input'\]"),
        ([{"outputs": {}}], r"^data\[0\]\.inputs: got NoneType; give exactly one of"),
        ([{"inputs": {"text": "hi"}}], r"^data\[0\]\.inputs: got \['text'\]"),
        ([{"inputs": {"input": "a", "messages": []}}], r"^data\[0\]\.inputs: got \['input', "),
        ([{"inputs": {"input": " "}}], r"^data\[0\]\.inputs\.input: got ' '"),
        ([{"inputs": {"messages": []}}], r"^data\[0\]\.inputs\.messages: got \[\]"),
        (
            [_example("hi", expected_routes="billing")],
            r"^data\[0\]\.outputs\.expected_routes: got str",
        ),
        ([_example("hi", expected_routes=["a", ""])], r"^data\[0\]\.outputs\.expected_routes\[1\]"),
        ([_example("hi", must_include="x")], r"^data\[0\]\.outputs\.must_include: got str"),
        ([_example("hi", must_include=[1])], r"^data\[0\]\.outputs\.must_include\[0\]: got 1"),
        ([_example("hi", pattern="(")], r"^data\[0\]\.outputs\.pattern: got '\('"),
        ([{"inputs": {"input": "hi"}, "outputs": 3}], r"^data\[0\]\.outputs: got int"),
        ([{"inputs": {"input": "hi"}, "metadata": 3}], r"^data\[0\]\.metadata: got int"),
        (
            [Example(id=uuid.uuid4(), inputs={"question": "hi"})],
            r"^data\[0\]\.inputs: got \['question'\]",
        ),
        ("team-routing", r"^data: got the dataset 'team-routing' without client="),
    ],
)
def test_data_validation_names_the_field(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        evaluate(_team(), data)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"reviews": "reject"}, r"^reviews: got 'reject'"),
        ({"reviewer": ""}, r"^reviewer: got ''"),
        ({"max_reviews": 0}, r"^max_reviews: got 0"),
        ({"max_reviews": True}, r"^max_reviews: got True"),
        ({"checkpointer": InMemorySaver(), "graph": "compiled"}, r"^checkpointer: the graph is"),
        ({"graph": "no-saver"}, r"^graph: compiled without a checkpointer"),
        ({"graph": "team"}, r"^graph: got str"),
    ],
)
def test_settings_validation_names_the_field(kwargs: dict[str, Any], message: str) -> None:
    graph = {
        "compiled": _team().compile(checkpointer=InMemorySaver()),
        "no-saver": _team().compile(),
        "team": "team",
        None: _team(),
    }[kwargs.pop("graph", None)]
    with pytest.raises(ValueError, match=message):
        evaluate(graph, LABELLED, **kwargs)
    with pytest.raises(ValueError, match=message):
        asyncio.run(aevaluate(graph, LABELLED, **kwargs))


@pytest.mark.parametrize(
    ("scorer", "outputs", "reference", "message"),
    [
        (route_exact_match, {}, {"expected_routes": "billing"}, r"^reference_outputs\.expected_"),
        (answer_traits, {}, {"pattern": 3}, r"^reference_outputs\.pattern: got 3"),
        (answer_traits, {}, ["x"], r"^reference_outputs: got list"),
    ],
)
def test_a_scorer_given_bad_labels_names_the_field(
    scorer: Any, outputs: Any, reference: Any, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        scorer(outputs, reference)


# ----------------------------------------------------------------------- LangSmith datasets


STAMP = "2030-01-01T00:00:00Z"


class _LangSmith:
    """A loopback HTTP server answering the LangSmith API calls `list_examples` makes."""

    def __init__(self, datasets: dict[str, list[dict[str, Any]]]) -> None:
        self.ids = {name: str(uuid.uuid4()) for name in datasets}
        self.examples = {self.ids[name]: rows for name, rows in datasets.items()}
        self.paths: list[tuple[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlparse(self.path)
                query = parse_qs(url.query)
                owner.paths.append(("GET", url.path))
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

            def do_POST(self) -> None:  # an upload: recorded, so the test can refuse it
                owner.paths.append(("POST", urlparse(self.path).path))
                self.send_response(500)
                self.end_headers()

            do_PATCH = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)

    def client(self) -> Client:
        return Client(
            api_url=f"http://127.0.0.1:{self.server.server_port}",
            api_key="offline-test",
            auto_batch_tracing=False,
        )


@pytest.fixture
def langsmith_datasets() -> Iterator[_LangSmith]:
    server = _LangSmith(
        {
            "team-routing": [
                {
                    "inputs": {"input": "Please refund order A1"},
                    "outputs": {"expected_routes": ["billing", "writer"], "answer": "unused"},
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


def test_a_langsmith_dataset_by_name_is_read_and_nothing_is_uploaded(
    langsmith_datasets: _LangSmith,
) -> None:
    client = langsmith_datasets.client()
    rows = list(evaluate(_team(), "team-routing", client=client))
    assert len(rows) == 3
    (precision, _, f1) = _routing(rows)["results"]
    assert f1["score"] == pytest.approx(5 / 6)
    assert f1["comment"] == "3 labelled runs, 2 exact, 0 without outputs"

    async def arows() -> list[Row]:
        return [r async for r in await aevaluate(_team(), "team-routing", client=client)]

    assert _routing(asyncio.run(arows()))["results"][0] == precision
    assert ("GET", "/examples") in langsmith_datasets.paths
    assert {method for method, _ in langsmith_datasets.paths} == {"GET"}
