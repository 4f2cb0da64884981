"""Write the golden threads of 0.1.0: run this against the OLD code, never today's.

Five threads, each stopped where an upgrade could hurt it, written by the package as it was
at 1fb253e (tests/golden/README.md says how to run this and when to write a new set):

- `tool_review`: a tool review paused at depth 1 (billing's `refund`, high risk);
- `domain_review`: a review paused inside a domain (`ops` -> deployer's `rollback`);
- `fanout_reviews`: a parallel fan-out paused on two dispatch reviews (manual tier);
- `memory`: a finished turn whose worker learnt a fact (its slot, and its output in the store);
- `killed`: a run SIGKILLed mid-hop, after the hop's exactly-once effect was recorded.

Each goes to `<out>/<name>.sqlite` (checkpoints and store in one file) and, with
`--postgres`, to one scratch database dumped to `<out>/postgres.sql`. Every tool and
function worker records each call in the store (`("golden", "calls", <thread id>)`), so a
test can count what ran across the old process and the new one. Models are
`FunctionChatModel`s deciding from what they are shown, never from a call count.

Self-contained on purpose: it imports only 0.1.0's public names, and is the record of what
wrote the fixtures. Do not update it to today's API; write a new set instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import RetryPolicy
from psycopg import sql

import langgraph_supervisor_pro
from langgraph_supervisor_pro import (
    ReviewPolicy,
    Worker,
    WorkerTask,
    create_supervisor,
    open_checkpointer,
    open_store,
)
from langgraph_supervisor_pro.persistence import StoreEffects, effect_key, open_effects
from langgraph_supervisor_pro.testing import FunctionChatModel

SCENARIOS = ("tool_review", "domain_review", "fanout_reviews", "memory", "killed")
COMMIT = "1fb253e"
POLICY = ReviewPolicy(tier="supervised", review_timeout=300_000_000)
"""Reviews that do not expire for about ten years (the fixtures outlive a day)."""
NO_RETRY = RetryPolicy(max_attempts=1)
BLOCK_SECONDS = 60.0
TASKS = {
    "tool_review": "Refund the duplicate charge on order A1001.",
    "domain_review": "Checkout returns 500s since the payments v2.3.1 release.",
    "fanout_reviews": "Compare our price for the Pro plan with the market.",
    "memory": "Find out who manages the ACME account.",
    "killed": "Charge ACME for the March invoice.",
}


def thread_id(scenario: str) -> str:
    return "golden-" + scenario.replace("_", "-")


def config(scenario: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id(scenario)}}


# -- what ran: one store item per call ------------------------------------------------------


class Calls:
    """Records each tool or worker call in the store, under the thread's namespace."""

    def __init__(self, store: Any, scenario: str) -> None:
        self.store = store
        self.namespace = ("golden", "calls", thread_id(scenario))

    def record(self, tool: str, /, **args: Any) -> None:
        self.store.put(self.namespace, uuid.uuid4().hex, {"tool": tool, "args": args})


# -- scripted models: each reply is a function of the messages shown ------------------------

_LEDGER_LINE = re.compile(r"^#\d+ (\S+) \[", re.MULTILINE)


def _prompt(messages: list[BaseMessage]) -> str:
    return str(messages[-1].content)


def _since_prompt(messages: list[BaseMessage]) -> list[BaseMessage]:
    """The messages after the last human message: this hop's own tool loop."""
    last = max((i for i, m in enumerate(messages) if isinstance(m, HumanMessage)), default=-1)
    return messages[last + 1 :]


def _tool_results(messages: list[BaseMessage], name: str) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage) and m.name == name]


def _call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def planner(plan: Callable[[str], list[str]], instructions: dict[str, str]) -> FunctionChatModel:
    """A supervisor model: the first worker of the turn's plan not yet in its ledger, else
    FINISH. `plan` maps the turn's task to its workers; a list item is a parallel decision."""

    def reply(call: Any) -> dict[str, Any]:
        prompt = _prompt(call.messages)
        task = prompt.split("\n", 1)[0].removeprefix("Task: ")
        done = set(_LEDGER_LINE.findall(prompt))
        for step in plan(task):
            names = step.split("+")
            if not done.intersection(names):
                first, *rest = names
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


# -- the five teams ---------------------------------------------------------------------------


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


MEMORY_FACT = "ACME's account manager is Dana Reyes (since 2027)."


def memory_team(calls: Calls) -> Any:
    @tool
    def lookup_customer(name: str) -> str:
        """Look a customer up in the CRM."""
        calls.record("lookup_customer", name=name)
        return MEMORY_FACT

    def learner_reply(call: Any) -> Any:
        learnt = _tool_results(_since_prompt(call.messages), "lookup_customer")
        if learnt:
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


def killed_team(
    calls: Calls, charge_once: Callable[[str], dict[str, Any]], block: Path | None
) -> Any:
    def researcher(task: WorkerTask) -> str:
        calls.record("research", topic="ACME invoice")
        return "ACME owes 120.00 EUR for March."

    def cashier(task: WorkerTask) -> str:
        outcome = charge_once(effect_key("charge"))
        if block is not None:  # the hop is killed here: its effect is recorded, the hop not
            tmp = block.with_suffix(".tmp")
            tmp.write_text(str(os.getpid()))
            tmp.replace(block)
            time.sleep(BLOCK_SECONDS)
            os._exit(3)
        return f"Charged {outcome['payment']} (recorded by {outcome['writer']})."

    workers = [
        Worker(name="researcher", description="Finds invoices.", agent=researcher),
        Worker(name="cashier", description="Charges.", agent=cashier, retry=NO_RETRY),
    ]
    instructions = {"researcher": "Find the invoice.", "cashier": "Charge it."}
    return create_supervisor(
        workers, model=planner(fixed("researcher", "cashier"), instructions), review=POLICY
    )


# -- writing ----------------------------------------------------------------------------------


def _sqlite_url(path: Path) -> str:
    return f"sqlite:///{path}"


@contextmanager
def opened(url: str) -> Iterator[tuple[Any, Any]]:
    with open_checkpointer(url) as saver, open_store(url) as store:
        yield saver, store


def _pending(out: dict[str, Any]) -> list[Any]:
    return list(out.get("__interrupt__") or [])


PAUSED_AT = {
    "tool_review": [("billing",)],
    "domain_review": [("ops", "deployer")],
    "fanout_reviews": [("docs",), ("web",)],
    "memory": [],
}
"""Where each thread that needs no kill stops: its pending reviews' paths (memory: done)."""


def write_threads(url: str, scenarios: tuple[str, ...]) -> None:
    """Run each of `scenarios` (not `killed`) until it pauses on its reviews, or is done."""
    teams = {
        "tool_review": tool_review_team,
        "domain_review": domain_review_team,
        "fanout_reviews": fanout_reviews_team,
        "memory": memory_team,
    }
    with opened(url) as (saver, store):
        for scenario in scenarios:
            app = teams[scenario](Calls(store, scenario)).compile(checkpointer=saver, store=store)
            ask = {"messages": [HumanMessage(TASKS[scenario], id=f"{scenario}-task-1")]}
            out = app.invoke(ask, config(scenario), durability="sync")
            paths = sorted(tuple(i.value["context"]["path"]) for i in _pending(out))
            assert paths == PAUSED_AT[scenario], (scenario, paths, out.get("status"))
            assert all(e["status"] == "success" for e in out["ledger"]), out["ledger"]
            if scenario == "memory":
                assert out["status"] == "done", out
                assert out["messages"][-1].content == f"Learnt: {MEMORY_FACT}"


@contextmanager
def charge_once(url: str, store: Any, calls: Calls) -> Iterator[Callable[[str], Any]]:
    """The cashier's effect, by key: exactly-once on Postgres (`lgsp_effects`), else the store's."""

    def body() -> dict[str, Any]:
        calls.record("charge", amount=120.0)
        return {"payment": "PAY-0001", "writer": "0.1.0"}

    if not url.startswith("postgresql"):
        effects = StoreEffects(store)
        yield lambda key: effects.run(key, lambda _: body())
        return

    def in_db(conn: Any) -> dict[str, Any]:
        conn.execute("INSERT INTO golden_charges (payment, amount) VALUES ('PAY-0001', 120)")
        return body()

    with open_effects(url) as pg_effects:
        yield lambda key: pg_effects.run(key, in_db)


def run_killed_child(url: str, block: Path) -> None:
    """In a child process: run the `killed` thread until the cashier's hop blocks."""
    with opened(url) as (saver, store):
        calls = Calls(store, "killed")
        with charge_once(url, store, calls) as charge:
            app = killed_team(calls, charge, block).compile(checkpointer=saver, store=store)
            ask = {"messages": [HumanMessage(TASKS["killed"], id="killed-task-1")]}
            app.invoke(ask, config("killed"), durability="sync")
    raise SystemExit("the cashier's hop was never reached")


def write_killed(url: str, workdir: Path) -> None:
    """Run the `killed` thread in a child process and SIGKILL it inside the cashier's hop."""
    block = workdir / f"blocked-{uuid.uuid4().hex[:8]}"
    child = subprocess.Popen(
        [sys.executable, __file__, "--child-killed", url, "--block", str(block)],
        env=os.environ.copy(),
    )
    try:
        deadline = time.monotonic() + BLOCK_SECONDS
        while not block.exists():
            if child.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the child never blocked (exit code {child.returncode})")
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
        assert child.wait(10) == -signal.SIGKILL
    finally:
        if child.poll() is None:
            child.kill()
        block.unlink(missing_ok=True)


def compact_sqlite(path: Path) -> None:
    """One small self-contained file: the WAL folded in, a rollback journal, 1 kB pages."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute("PRAGMA page_size=1024")
        conn.execute("VACUUM")
    finally:
        conn.close()
    for suffix in ("-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def write_sqlite(out: Path) -> None:
    for scenario in SCENARIOS:
        path = out / f"{scenario}.sqlite"
        for stale in out.glob(f"{scenario}.sqlite*"):
            stale.unlink()
        url = _sqlite_url(path)
        if scenario == "killed":
            write_killed(url, out)
        else:
            write_threads(url, (scenario,))
        compact_sqlite(path)
        print(f"wrote {path} ({path.stat().st_size} bytes)")


def write_postgres(server_uri: str, out: Path) -> None:
    """All five threads in one scratch database, dumped as plain SQL, then dropped."""
    name = f"lgsp_golden_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(server_uri)
    url = urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE golden_charges (payment text NOT NULL, amount numeric)")
        write_threads(url, tuple(PAUSED_AT))
        write_killed(url, out)
        dump = out / "postgres.sql"
        subprocess.run(
            ["pg_dump", "--no-owner", "--no-privileges", "--file", str(dump), url], check=True
        )
        print(f"wrote {dump} ({dump.stat().st_size} bytes)")
    finally:
        with psycopg.connect(server_uri, autocommit=True) as conn:
            drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)")
            conn.execute(drop.format(sql.Identifier(name)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "0.1.0")
    parser.add_argument("--postgres", help="a server URI (a scratch database is made on it)")
    parser.add_argument("--child-killed", help=argparse.SUPPRESS)
    parser.add_argument("--block", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child_killed:
        run_killed_child(args.child_killed, args.block)
        return
    # Today's package has no `langgraph_supervisor_pro.review.desk`: 0.1.0 had.
    if importlib.util.find_spec("langgraph_supervisor_pro.review.desk") is None:
        raise SystemExit(
            f"{langgraph_supervisor_pro.__file__} is not 0.1.0: run this in a worktree at "
            f"{COMMIT} with PYTHONPATH=<worktree> (tests/golden/README.md)"
        )
    print(f"writing with {langgraph_supervisor_pro.__file__}")
    args.out.mkdir(parents=True, exist_ok=True)
    write_sqlite(args.out.resolve())
    if args.postgres:
        write_postgres(args.postgres, args.out.resolve())


if __name__ == "__main__":
    main()
