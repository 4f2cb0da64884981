"""Threads survive upgrades: today's code resumes threads 0.1.0 wrote, to `done`.

`tests/golden/0.1.0/` holds five threads written by 0.1.0 (`_write.py`, run at 1fb253e;
README.md beside this file): one SQLite file per thread and a Postgres dump of all five.
Each test loads one with today's code and the same team (worker names, tools and scripted
models that decide from what they are shown), answers its pending reviews with LangChain's
human-in-the-loop answers by interrupt id, resumes it to `done`, and checks the ledger, that
every tool ran exactly once across the old process and the new one (each call is a store
item), and that what the workers learnt is still there.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command, RetryPolicy

from langgraph_supervisor_pro import (
    ReviewPolicy,
    Worker,
    WorkerTask,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro._state import SCHEMA_VERSION, schema_version
from langgraph_supervisor_pro.persistence import StoreEffects, effect_key, open_effects
from langgraph_supervisor_pro.testing import FunctionChatModel

FIXTURES = Path(__file__).parent / "0.1.0"
SCENARIOS = ("tool_review", "domain_review", "fanout_reviews", "memory", "killed")
BACKENDS = [
    pytest.param("sqlite"),
    pytest.param("postgres", marks=pytest.mark.integration),
]
POLICY = ReviewPolicy(tier="supervised", review_timeout=300_000_000)
TASKS = {
    "tool_review": "Refund the duplicate charge on order A1001.",
    "domain_review": "Checkout returns 500s since the payments v2.3.1 release.",
    "fanout_reviews": "Compare our price for the Pro plan with the market.",
    "memory": "Find out who manages the ACME account.",
    "killed": "Charge ACME for the March invoice.",
}
MEMORY_FACT = "ACME's account manager is Dana Reyes (since 2027)."
MEMORY_TASK_2 = "Write a note to ACME's account manager, then remind me who that is."
REVIEWER = "golden-test"


def thread_id(scenario: str) -> str:
    return "golden-" + scenario.replace("_", "-")


def config(scenario: str, namespace: str | None = None) -> Any:
    configurable = {"thread_id": thread_id(scenario)}
    if namespace is not None:
        configurable["checkpoint_ns"] = namespace
    return {"configurable": configurable}


# -- loading a fixture ------------------------------------------------------------------------


def restore_dump(dump: Path, uri: str) -> None:
    """Load `pg_dump`'s plain SQL into the database of `uri` (no psql needed).

    Statements end at a line ending with `;`; a `COPY ... FROM stdin;` is fed the rows
    after it, up to `\\.`; psql's own commands (`\\restrict`, ...) and comments are skipped.
    """
    lines = iter(dump.read_text(encoding="utf-8").splitlines())
    statement: list[str] = []
    with psycopg.connect(uri, autocommit=True) as conn:
        for line in lines:
            if not statement and (not line.strip() or line.startswith(("--", "\\"))):
                continue
            statement.append(line)
            if not line.rstrip().endswith(";"):
                continue
            text, statement = "\n".join(statement), []
            if text.startswith("COPY ") and text.endswith("FROM stdin;"):
                with conn.cursor().copy(text) as copy:
                    for row in lines:
                        if row == "\\.":
                            break
                        copy.write(row + "\n")
            else:
                conn.execute(text)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, Callable[[str], str]]:
    """The backend's name and a function giving a scenario's URL, the fixture loaded.

    SQLite: the scenario's file copied to `tmp_path`. Postgres: the dump restored once into
    a fresh database (`pg_database`), holding all five threads.
    """
    if request.param == "sqlite":

        def sqlite_url(scenario: str) -> str:
            path = tmp_path / f"{scenario}.sqlite"
            shutil.copyfile(FIXTURES / f"{scenario}.sqlite", path)
            return f"sqlite:///{path}"

        return "sqlite", sqlite_url
    uri = str(request.getfixturevalue("pg_database"))
    restore_dump(FIXTURES / "postgres.sql", uri)
    return "postgres", lambda scenario: uri


# -- what ran: one store item per call (0.1.0's and ours) -------------------------------------


class Calls:
    """Records each tool or worker call in the store, where 0.1.0 recorded its own."""

    def __init__(self, store: Any, scenario: str) -> None:
        self.store = store
        self.namespace = ("golden", "calls", thread_id(scenario))

    def record(self, tool: str, /, **args: Any) -> None:
        self.store.put(self.namespace, uuid.uuid4().hex, {"tool": tool, "args": args})

    def all(self) -> list[dict[str, Any]]:
        return [item.value for item in self.store.search(self.namespace, limit=1000)]

    def counts(self) -> Counter[str]:
        return Counter(call["tool"] for call in self.all())

    def args(self, name: str) -> list[dict[str, Any]]:
        return [call["args"] for call in self.all() if call["tool"] == name]


# -- scripted models: each reply is a function of the messages shown ---------------------------

_LEDGER_LINE = re.compile(r"^#\d+ (\S+) \[", re.MULTILINE)


def _since_prompt(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last human message: this hop's own tool loop."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return messages[last + 1 :]


def _tool_results(messages: list[BaseMessage], name: str) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage) and m.name == name]


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def planner(plan: Callable[[str], list[str]], instructions: dict[str, str]) -> FunctionChatModel:
    """A supervisor model: the first step of the turn's plan none of whose workers is in its
    ledger yet, else FINISH. `a+b` is a parallel decision."""

    def reply(call: Any) -> dict[str, Any]:
        prompt = str(call.messages[-1].content)
        task = prompt.split("\n", 1)[0].removeprefix("Task: ")
        done = set(_LEDGER_LINE.findall(prompt))
        for step in plan(task):
            first, *rest = names = step.split("+")
            if not done.intersection(names):
                decision: dict[str, Any] = {"next": first, "instructions": instructions[first]}
                if rest:
                    decision["parallel"] = [
                        {"next": n, "instructions": instructions[n]} for n in rest
                    ]
                return decision
        return {"next": "FINISH", "instructions": "All done."}

    return FunctionChatModel(reply=reply)


def fixed(*steps: str) -> Callable[[str], list[str]]:
    return lambda task: list(steps)


# -- the five teams, with today's API --------------------------------------------------------


def tool_review_team(calls: Calls) -> Any:
    def triage(task: WorkerTask) -> str:
        calls.record("triage", task=task.task)
        return "Order A1001 was charged twice: a refund case."

    @tool
    def lookup_order(order_id: str) -> str:
        """Look an order up."""
        calls.record("lookup_order", order_id=order_id)
        return f"{order_id}: paid 29.00 EUR twice"

    @tool
    def refund(order_id: str, amount: float) -> str:
        """Refund an order."""
        calls.record("refund", order_id=order_id, amount=amount)
        return f"Refunded {amount:.2f} EUR on {order_id}."

    def billing_reply(call: Any) -> Any:
        hop = _since_prompt(call.messages)
        if refunded := _tool_results(hop, "refund"):
            return refunded[-1]
        if _tool_results(hop, "lookup_order"):
            return _call("refund", {"order_id": "A1001", "amount": 29.0}, "call-refund")
        return _call("lookup_order", {"order_id": "A1001"}, "call-lookup")

    workers = [
        Worker(name="triage", description="Sorts requests.", agent=triage),
        Worker(
            name="billing",
            description="Orders and refunds.",
            model=FunctionChatModel(reply=billing_reply),
            tools=[lookup_order, refund],
            risks={"lookup_order": "low", "refund": "high"},
        ),
    ]
    instructions = {"triage": "Classify the request.", "billing": "Refund the duplicate."}
    return create_supervisor(
        workers, model=planner(fixed("triage", "billing"), instructions), review=POLICY
    )


def domain_review_team(calls: Calls) -> Any:
    def pager(task: WorkerTask) -> str:
        calls.record("page", who="on-call")
        return "Paged the on-call engineer."

    def comms(task: WorkerTask) -> str:
        calls.record("post_status", text="Investigating checkout errors.")
        return "Status page updated."

    @tool
    def rollback(release: str) -> str:
        """Roll a release back."""
        calls.record("rollback", release=release)
        return f"Rolled back to {release}."

    def deployer_reply(call: Any) -> Any:
        if done := _tool_results(_since_prompt(call.messages), "rollback"):
            return done[-1]
        return _call("rollback", {"release": "payments v2.3.0"}, "call-rollback")

    ops = create_supervisor(
        [
            Worker(name="pager", description="Pages on-call.", agent=pager),
            Worker(
                name="deployer",
                description="Rolls deploys back.",
                model=FunctionChatModel(reply=deployer_reply),
                tools=[rollback],
                risks={"rollback": "high"},
            ),
        ],
        model=planner(
            fixed("pager", "deployer"),
            {"pager": "Page on-call.", "deployer": "Roll payments back."},
        ),
        review=POLICY,
        name="ops",
    )
    workers = [
        Worker(name="ops", description="Operations.", agent=ops),
        Worker(name="comms", description="Status page.", agent=comms),
    ]
    instructions = {"ops": "Stop the 500s.", "comms": "Tell customers."}
    return create_supervisor(
        workers, model=planner(fixed("ops", "comms"), instructions), review=POLICY
    )


def fanout_reviews_team(calls: Calls) -> Any:
    def web(task: WorkerTask) -> str:
        calls.record("search_web", query=task.instructions)
        return "Market: the Pro plan sells at 49 EUR a month."

    def docs(task: WorkerTask) -> str:
        calls.record("search_docs", query=task.instructions)
        return f"Our price list ({task.instructions}): Pro at 45 EUR a month."

    workers = [
        Worker(name="web", description="Searches the web.", agent=web),
        Worker(name="docs", description="Searches our documents.", agent=docs),
    ]
    instructions = {"web": "Find market prices.", "docs": "Find our price list."}
    return create_supervisor(
        workers,
        model=planner(fixed("web+docs"), instructions),
        review=ReviewPolicy(tier="manual", review_timeout=300_000_000),
        parallel=True,
    )


def memory_team(calls: Calls) -> Any:
    @tool
    def lookup_customer(name: str) -> str:
        """Look a customer up in the CRM."""
        calls.record("lookup_customer", name=name)
        return MEMORY_FACT

    def learner_reply(call: Any) -> Any:
        if learnt := _tool_results(_since_prompt(call.messages), "lookup_customer"):
            return f"Learnt: {learnt[-1]}"
        if known := _tool_results(call.messages, "lookup_customer"):
            return f"Remembered: {known[-1]}"
        return _call("lookup_customer", {"name": "ACME"}, "call-crm")

    def writer(task: WorkerTask) -> str:
        calls.record("draft_note", reads=sorted(task.reads))
        learnt = task.reads["learner"].result_text() if "learner" in task.reads else "nobody"
        return f"Note drafted for: {learnt}"

    def plan(task: str) -> list[str]:
        return ["learner"] if task == TASKS["memory"] else ["writer", "learner"]

    workers = [
        Worker(
            name="learner",
            description="Finds customer facts.",
            model=FunctionChatModel(reply=learner_reply),
            tools=[lookup_customer],
            risks={"lookup_customer": "low"},
        ),
        Worker(name="writer", description="Drafts notes.", agent=writer, reads=("learner",)),
    ]
    instructions = {"learner": "Who manages ACME?", "writer": "Draft the note."}
    return create_supervisor(workers, model=planner(plan, instructions), review=POLICY)


def killed_team(calls: Calls, charge_once: Callable[[str], dict[str, Any]]) -> Any:
    def researcher(task: WorkerTask) -> str:
        calls.record("research", topic="ACME invoice")
        return "ACME owes 120.00 EUR for March."

    def cashier(task: WorkerTask) -> str:
        outcome = charge_once(effect_key("charge"))
        return f"Charged {outcome['payment']} (recorded by {outcome['writer']})."

    workers = [
        Worker(name="researcher", description="Finds invoices.", agent=researcher),
        Worker(
            name="cashier",
            description="Charges.",
            agent=cashier,
            retry=RetryPolicy(max_attempts=1),
        ),
    ]
    instructions = {"researcher": "Find the invoice.", "cashier": "Charge it."}
    return create_supervisor(
        workers, model=planner(fixed("researcher", "cashier"), instructions), review=POLICY
    )


# -- helpers ----------------------------------------------------------------------------------


def hop(turn: int, step: int, worker: str, instructions: str, summary: str) -> dict[str, Any]:
    """A successful hop's ledger entry, decided by the supervisor's model."""
    return {
        "turn": turn,
        "step": step,
        "worker": worker,
        "instructions": instructions,
        "decided_by": "model",
        "status": "success",
        "summary": summary,
        "error": None,
        "refused": [],
    }


def answer(decision: dict[str, Any]) -> dict[str, Any]:
    """One LangChain HITL answer for one pending review, saying who gave it."""
    return {"decisions": [decision], "reviewer": REVIEWER}


def pending_by_path(app: Any, scenario: str) -> dict[tuple[str, ...], Any]:
    """The thread's pending reviews (read, not run), by the path of workers to each."""
    interrupts = app.get_state(config(scenario)).interrupts
    return {tuple(i.value["context"]["path"]): i for i in interrupts}


def reviews(values: dict[str, Any]) -> list[tuple[str, str, tuple[str, ...], str, str | None]]:
    return sorted(
        (r["kind"], r["action"], tuple(r["path"]), r["decision"], r["reviewer"])
        for r in values["reviews"]
    )


def finished(app: Any, scenario: str, out: dict[str, Any]) -> dict[str, Any]:
    """The run's values, after checking it ended `done` with nothing pending."""
    assert "__interrupt__" not in out, out["__interrupt__"]
    assert out["status"] == "done", (out.get("halt_reason"), out.get("halt_detail"))
    head = app.get_state(config(scenario))
    assert head.next == () and head.interrupts == ()
    return out


class Opened:
    """The scenario's checkpointer and store (and effects, for `killed` on Postgres)."""

    def __init__(self, stack: ExitStack, url: str) -> None:
        self.url = url
        self.saver = stack.enter_context(open_checkpointer(url))
        self.store = stack.enter_context(open_store(url))
        self.stack = stack

    def compile(self, graph: Any) -> Any:
        return graph.compile(checkpointer=self.saver, store=self.store)


@pytest.fixture
def opened(backend: tuple[str, Callable[[str], str]]) -> Iterator[Callable[[str], Opened]]:
    with ExitStack() as stack:
        yield lambda scenario: Opened(stack, backend[1](scenario))


# -- the tests --------------------------------------------------------------------------------


def test_a_tool_review_paused_at_depth_1_is_approved_and_the_run_finishes(opened):
    db = opened("tool_review")
    calls = Calls(db.store, "tool_review")
    app = db.compile(tool_review_team(calls))
    pending = pending_by_path(app, "tool_review")
    assert list(pending) == [("billing",)]
    (review,) = pending.values()
    assert review.value["action_requests"][0]["name"] == "refund"
    assert calls.counts() == {"triage": 1, "lookup_order": 1}  # 0.1.0's, before the pause

    out = app.invoke(
        Command(resume={review.id: answer({"type": "approve"})}), config("tool_review")
    )

    values = finished(app, "tool_review", out)
    triaged = "Order A1001 was charged twice: a refund case."
    assert values["ledger"] == [
        hop(1, 1, "triage", "Classify the request.", triaged),
        hop(1, 2, "billing", "Refund the duplicate.", "Refunded 29.00 EUR on A1001."),
    ]
    assert calls.counts() == {"triage": 1, "lookup_order": 1, "refund": 1}
    assert calls.args("refund") == [{"order_id": "A1001", "amount": 29.0}]
    assert reviews(values) == [("tool", "refund", ("billing",), "approve", REVIEWER)]
    assert values["messages"][-1].content == "Refunded 29.00 EUR on A1001."
    # The billing agent's transcript spans both processes, each step once.
    slot = values["workers"]["billing"]["messages"]
    assert [m.name for m in slot if isinstance(m, ToolMessage)] == ["lookup_order", "refund"]


def test_a_review_paused_inside_a_domain_is_edited_and_the_tree_finishes(opened):
    db = opened("domain_review")
    calls = Calls(db.store, "domain_review")
    app = db.compile(domain_review_team(calls))
    pending = pending_by_path(app, "domain_review")
    assert list(pending) == [("ops", "deployer")]
    (review,) = pending.values()
    assert review.value["action_requests"][0]["args"] == {"release": "payments v2.3.0"}
    assert calls.counts() == {"page": 1}

    edit = {"type": "edit", "edited_action": {"name": "rollback", "args": {"release": "v2.2.9"}}}
    out = app.invoke(Command(resume={review.id: answer(edit)}), config("domain_review"))

    values = finished(app, "domain_review", out)
    assert values["ledger"] == [
        hop(1, 1, "ops", "Stop the 500s.", "Rolled back to v2.2.9."),
        hop(1, 2, "comms", "Tell customers.", "Status page updated."),
    ]
    ops = app.get_state(config("domain_review", "ops")).values
    assert ops["status"] == "done"
    assert ops["ledger"] == [
        hop(1, 1, "pager", "Page on-call.", "Paged the on-call engineer."),
        hop(1, 2, "deployer", "Roll payments back.", "Rolled back to v2.2.9."),
    ]
    assert calls.counts() == {"page": 1, "rollback": 1, "post_status": 1}
    assert calls.args("rollback") == [{"release": "v2.2.9"}]
    assert reviews(values) == [("tool", "rollback", ("ops", "deployer"), "edit", REVIEWER)]


def test_a_fan_out_paused_on_two_dispatch_reviews_is_answered_by_interrupt_id(opened):
    db = opened("fanout_reviews")
    calls = Calls(db.store, "fanout_reviews")
    app = db.compile(fanout_reviews_team(calls))
    pending = pending_by_path(app, "fanout_reviews")
    assert sorted(pending) == [("docs",), ("web",)]
    assert {p.value["action_requests"][0]["name"] for p in pending.values()} == {
        "dispatch:web",
        "dispatch:docs",
    }
    assert calls.counts() == {}  # nothing ran before the reviews

    edit = {
        "type": "edit",
        "edited_action": {"name": "dispatch:docs", "args": {"instructions": "Pro plan only."}},
    }
    out = app.invoke(
        Command(
            resume={
                pending[("web",)].id: answer({"type": "approve"}),
                pending[("docs",)].id: answer(edit),
            }
        ),
        config("fanout_reviews"),
    )

    values = finished(app, "fanout_reviews", out)
    steps = {p.value["context"]["step"]: path[0] for path, p in pending.items()}
    assert sorted(steps) == [1, 2]
    summaries = {
        "web": ("Find market prices.", "Market: the Pro plan sells at 49 EUR a month."),
        "docs": ("Pro plan only.", "Our price list (Pro plan only.): Pro at 45 EUR a month."),
    }
    assert sorted(values["ledger"], key=lambda e: e["step"]) == [
        hop(1, step, worker, *summaries[worker]) for step, worker in sorted(steps.items())
    ]
    assert calls.counts() == {"search_web": 1, "search_docs": 1}
    assert calls.args("search_docs") == [{"query": "Pro plan only."}]
    assert reviews(values) == [
        ("dispatch", "dispatch:docs", ("docs",), "edit", REVIEWER),
        ("dispatch", "dispatch:web", ("web",), "approve", REVIEWER),
    ]


def test_a_finished_turns_worker_remembers_what_it_learnt(opened):
    db = opened("memory")
    calls = Calls(db.store, "memory")
    app = db.compile(memory_team(calls))
    before = app.get_state(config("memory")).values
    assert before["status"] == "done" and before["turn"] == 1
    assert calls.counts() == {"lookup_customer": 1}

    ask = {"messages": [HumanMessage(MEMORY_TASK_2, id="memory-task-2")]}
    out = app.invoke(ask, config("memory"))

    values = finished(app, "memory", out)
    learnt, remembered = f"Learnt: {MEMORY_FACT}", f"Remembered: {MEMORY_FACT}"
    assert values["ledger"] == [
        hop(1, 1, "learner", "Who manages ACME?", learnt),
        # The writer read the learner's full output of turn 1 from 0.1.0's store...
        hop(2, 1, "writer", "Draft the note.", f"Note drafted for: {learnt}"),
        # ...and the learner answered from its own slot, without calling its tool again.
        hop(2, 2, "learner", "Who manages ACME?", remembered),
    ]
    assert calls.counts() == {"lookup_customer": 1, "draft_note": 1}
    assert calls.args("draft_note") == [{"reads": ["learner"]}]
    assert values["messages"][-1].content == remembered
    slot = values["workers"]["learner"]
    assert [r["status"] for r in slot["results"]] == ["success", "success"]
    assert _tool_results(slot["messages"], "lookup_customer") == [MEMORY_FACT]


def test_a_run_killed_mid_hop_resumes_and_its_effect_is_not_run_again(opened, backend):
    db = opened("killed")
    calls = Calls(db.store, "killed")
    postgres = backend[0] == "postgres"

    def body() -> dict[str, Any]:
        calls.record("charge", amount=120.0)
        return {"payment": "PAY-0002", "writer": "today"}  # never: 0.1.0 recorded it

    if postgres:
        effects = db.stack.enter_context(open_effects(db.url))

        def in_db(conn: Any) -> dict[str, Any]:
            conn.execute("INSERT INTO golden_charges (payment, amount) VALUES ('PAY-0002', 120)")
            return body()

        def charge_once(key: str) -> dict[str, Any]:
            return effects.run(key, in_db)
    else:
        store_effects = StoreEffects(db.store)

        def charge_once(key: str) -> dict[str, Any]:
            return store_effects.run(key, lambda _: body())

    app = db.compile(killed_team(calls, charge_once))
    assert app.get_state(config("killed")).next == ("cashier",)  # killed inside its hop
    assert calls.counts() == {"research": 1, "charge": 1}

    out = app.invoke(None, config("killed"))

    values = finished(app, "killed", out)
    assert values["ledger"] == [
        hop(1, 1, "researcher", "Find the invoice.", "ACME owes 120.00 EUR for March."),
        hop(1, 2, "cashier", "Charge it.", "Charged PAY-0001 (recorded by 0.1.0)."),
    ]
    assert calls.counts() == {"research": 1, "charge": 1}
    if postgres:
        with psycopg.connect(db.url) as conn:
            rows = conn.execute("SELECT payment FROM golden_charges").fetchall()
        assert rows == [("PAY-0001",)]


# -- the state schema version -----------------------------------------------------------------


def test_an_old_thread_reads_as_schema_1_and_a_new_one_records_the_current_version_once(opened):
    db = opened("memory")
    app = db.compile(memory_team(Calls(db.store, "memory")))
    old = app.get_state(config("memory")).values
    assert "schema_version" not in old and schema_version(old) == 1  # 0.1.0 recorded none
    out = app.invoke({"messages": [("user", MEMORY_TASK_2)]}, config("memory"))
    assert "schema_version" not in out  # an old thread is not re-stamped by a later turn

    new: Any = {"configurable": {"thread_id": "golden-new-thread"}}
    out = app.invoke({"messages": [("user", TASKS["memory"])]}, new)
    assert out["status"] == "done"
    assert out["schema_version"] == SCHEMA_VERSION == schema_version(out)
    written = app.get_state(new).config["configurable"]["checkpoint_id"]
    first = db.saver.get_tuple(new).checkpoint["channel_versions"]["schema_version"]
    out = app.invoke({"messages": [("user", MEMORY_TASK_2)]}, new)
    assert out["schema_version"] == SCHEMA_VERSION and len(out["ledger"]) == 3
    # Written once, by the first turn: the second turn's checkpoints never wrote it again.
    head = db.saver.get_tuple(new).checkpoint
    assert head["id"] != written and head["channel_versions"]["schema_version"] == first
