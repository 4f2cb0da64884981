"""Remote domains: a root whose workers are supervisor graphs served by another server.

Two real `langgraph dev` servers on free loopback ports: server B serves the domains of
`tests/integration/_remote/domain.py` (`ops`, whose clerk's `rollback` pauses for a
review; `desk`, which answers at once; `broken`, whose runs fail), each traced by an
`OTelCallbackHandler` into a file; server A serves the root of `_remote/root.py`, whose
`ops` and `desk` workers are `RemoteGraph`s of server B. The same root also runs in this
process (sync and async) against server B.
"""

from __future__ import annotations

import asyncio
import json
import socket
import uuid
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tracers import LangChainTracer
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.pregel.remote import RemoteGraph
from langgraph.types import Command
from langgraph_sdk import get_sync_client

from langgraph_supervisor_pro import SupervisorView, Worker, create_supervisor
from langgraph_supervisor_pro._graph import remote_hop
from langgraph_supervisor_pro._internal.twins import Call
from langgraph_supervisor_pro._remote import REMOTE_EVENT_KEY, remote_stream_event, remote_thread_id
from tests._langsmith import CaptureServer
from tests.integration._devserver import assistant_id, client, interrupts, serve
from tests.integration._remote.root import NO_WAIT, build

pytestmark = pytest.mark.integration

APP = Path(__file__).resolve().parent / "_remote"
ROLL_BACK = {"messages": [{"role": "user", "content": "Roll back the database"}]}
NOTE = {"messages": [{"role": "user", "content": "File a note about the outage"}]}


@pytest.fixture(scope="module")
def spans_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spans") / "server-b.jsonl"


@pytest.fixture(scope="module")
def server_b(tmp_path_factory: pytest.TempPathFactory, spans_file: Path) -> Iterator[str]:
    """Server B: the remote domains, tracing into `spans_file`."""
    log = tmp_path_factory.mktemp("b") / "server.log"
    with serve("langgraph.json", log, app=APP, env={"LGSP_SPANS_FILE": str(spans_file)}) as url:
        yield url


@pytest.fixture(scope="module")
def server_a(tmp_path_factory: pytest.TempPathFactory, server_b: str) -> Iterator[str]:
    """Server A: the root, whose `ops` and `desk` workers are served by server B."""
    log = tmp_path_factory.mktemp("a") / "server.log"
    with serve("langgraph.root.json", log, app=APP, env={"LGSP_REMOTE_URL": server_b}) as url:
        yield url


def _config() -> dict[str, Any]:
    return {"configurable": {"thread_id": str(uuid.uuid4())}}


def _remote_runs(url: str, thread: str) -> list[dict[str, Any]]:
    return list(get_sync_client(url=url).runs.list(thread, limit=100))


def _remote_state(url: str, thread: str) -> dict[str, Any]:
    return dict(get_sync_client(url=url).threads.get_state(thread)["values"])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# -- a root in this process, domains on server B -----------------------------------------


def test_a_hop_to_a_remote_domain_finishes_as_a_typed_result(server_b: str) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    out = app.invoke(NOTE, config)
    assert out["status"] == "done"
    (entry,) = out["ledger"]
    assert (entry["worker"], entry["status"]) == ("desk", "success")
    assert entry["summary"].startswith("Filed a note about")
    assert out["messages"][-1].content.startswith("Filed a note about")
    # The slot keeps the prompt and the domain's answer, not the domain's transcript.
    (result,) = out["workers"]["desk"]["results"]
    assert result["status"] == "success"
    # The remote thread is the one derived from the root thread and the worker path.
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    remote = _remote_state(server_b, thread)
    assert remote["status"] == "done" and len(remote["ledger"]) == 1
    (run,) = _remote_runs(server_b, thread)
    assert run["status"] == "success" and run["metadata"]["lgsp_run"] == "1:1"
    assert run["metadata"]["lgsp_path"] == "desk"

    # A second turn of the root is the remote domain's second turn, in the same thread.
    out = app.invoke(
        {"messages": [{"role": "user", "content": "File another note"}]},
        config,
    )
    assert [e["status"] for e in out["ledger"]] == ["success", "success"]
    remote = _remote_state(server_b, thread)
    assert remote["turn"] == 2 and len(remote["ledger"]) == 2
    assert sorted(r["metadata"]["lgsp_run"] for r in _remote_runs(server_b, thread)) == [
        "1:1",
        "2:1",
    ]


def test_a_root_without_a_checkpointer_never_shares_a_remote_thread(server_b: str) -> None:
    app = build(server_b).compile()
    first = app.invoke({"messages": [{"role": "user", "content": "File note one"}]})
    second = app.invoke({"messages": [{"role": "user", "content": "File note two"}]})
    assert first["ledger"][0]["summary"] == "Filed a note about: Task: File note one"
    assert second["ledger"][0]["summary"] == "Filed a note about: Task: File note two"


def test_a_replayed_hop_reuses_the_remote_run_instead_of_starting_another(server_b: str) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    first = app.invoke(NOTE, config)
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    assert len(_remote_runs(server_b, thread)) == 1
    # Replay the hop as a crash recovery would: from the checkpoint before the worker ran.
    (before,) = [s for s in app.get_state_history(config) if s.next == ("desk",)]
    again = app.invoke(None, before.config)
    assert again["status"] == "done"
    assert again["ledger"] == first["ledger"]
    assert again["messages"][-1].content == first["messages"][-1].content
    assert len(_remote_runs(server_b, thread)) == 1  # no second run
    assert len(_remote_state(server_b, thread)["ledger"]) == 1


def test_a_hop_replayed_after_the_remote_domain_moved_on_reads_its_own_turn(
    server_b: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    first = app.invoke({"messages": [{"role": "user", "content": "File note one"}]}, config)
    app.invoke({"messages": [{"role": "user", "content": "File note two"}]}, config)
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    assert _remote_state(server_b, thread)["turn"] == 2
    # Back to the first turn's hop (time travel): its answer, not the second turn's.
    (before,) = [
        s for s in app.get_state_history(config) if s.next == ("desk",) and s.values["turn"] == 1
    ]
    again = app.invoke(None, before.config)
    assert again["ledger"] == first["ledger"]
    assert again["ledger"][0]["summary"] == "Filed a note about: Task: File note one"
    assert len(_remote_runs(server_b, thread)) == 2  # no run started

    # When the server no longer holds the hop's run's checkpoints (its retention pruned
    # them): a failed hop, said so, and no run started.
    real = remote_hop._Api.call

    def pruned(api: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        call = real(api, name, *args, **kwargs)
        return Call(lambda: [], None) if name == "get_history" else call

    monkeypatch.setattr(remote_hop._Api, "call", pruned)
    lost = app.invoke(None, before.config)
    (entry,) = lost["ledger"]
    assert entry["status"] == "failed"
    assert "has moved on past this hop and no longer holds the hop's result" in entry["error"]
    assert len(_remote_runs(server_b, thread)) == 2


def test_a_root_forked_with_a_new_input_sends_the_new_task_not_the_old_turns_answer(
    server_b: str,
) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    app.invoke({"messages": [{"role": "user", "content": "File note one"}]}, config)
    app.invoke({"messages": [{"role": "user", "content": "File note two"}]}, config)
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    # Fork at the end of the first turn with another task: its hop has the second turn's
    # turn and step (2:1), and another prompt.
    end_of_first = next(
        s for s in app.get_state_history(config) if not s.next and s.values["turn"] == 1
    )
    fork = app.invoke(
        {"messages": [{"role": "user", "content": "File note three"}]}, end_of_first.config
    )
    assert fork["ledger"][-1]["summary"] == "Filed a note about: Task: File note three"
    assert fork["messages"][-1].content == "Filed a note about: Task: File note three"
    runs = _remote_runs(server_b, thread)
    assert sorted(r["metadata"]["lgsp_run"] for r in runs) == ["1:1", "2:1", "2:1"]
    assert len({r["metadata"]["lgsp_prompt"] for r in runs}) == 3
    assert _remote_state(server_b, thread)["turn"] == 3  # the new task, a turn of its own

    # Replays of either timeline's 2:1 hop join their own run and read their own answer.
    fork_hop, first_hop = [
        s for s in app.get_state_history(config) if s.next == ("desk",) and s.values["turn"] == 2
    ]
    assert app.invoke(None, fork_hop.config)["ledger"][-1]["summary"].endswith("note three")
    assert app.invoke(None, first_hop.config)["ledger"][-1]["summary"].endswith("note two")
    assert len(_remote_runs(server_b, thread)) == 3


def _spied_calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """Every SDK call a remote hop makes from now on: (name, keyword arguments)."""
    calls: list[tuple[str, dict[str, Any]]] = []
    real = remote_hop._Api.call

    def spy(api: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        calls.append((name, kwargs))
        return real(api, name, *args, **kwargs)

    monkeypatch.setattr(remote_hop._Api, "call", spy)
    return calls


def test_a_hop_replayed_past_many_remote_runs_reads_back_to_its_own_and_starts_none(
    server_b: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pages of 2 runs; the server is on this machine's clock (no skew).
    monkeypatch.setattr(remote_hop, "_RUNS_PAGE", 2)
    monkeypatch.setattr(remote_hop, "_CLOCK_SKEW", timedelta(0))
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    notes = [f"File note {n}" for n in range(1, 8)]
    outs = []
    calls = _spied_calls(monkeypatch)
    for note in notes:
        calls.clear()
        outs.append(app.invoke({"messages": [{"role": "user", "content": note}]}, config))
        # A new hop reads one page: its oldest run was started before this hop was sent.
        assert [name for name, _ in calls].count("list_runs") == 1
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    assert len(_remote_runs(server_b, thread)) == 7

    # Back to the first turn's hop: six newer runs (three pages) lie between it and now,
    # and the remote thread's later turns' checkpoints.
    (before,) = [
        s for s in app.get_state_history(config) if s.next == ("desk",) and s.values["turn"] == 1
    ]
    calls.clear()
    again = app.invoke(None, before.config)
    assert again["ledger"] == outs[0]["ledger"]
    assert again["ledger"][0]["summary"] == "Filed a note about: Task: File note 1"
    assert len(_remote_runs(server_b, thread)) == 7  # no second run of the old hop
    offsets = [kwargs["offset"] for name, kwargs in calls if name == "list_runs"]
    assert offsets == [0, 2, 4, 6]
    (oldest,) = [r for r in _remote_runs(server_b, thread) if r["metadata"]["lgsp_run"] == "1:1"]
    asked_history = [kwargs for name, kwargs in calls if name == "get_history"]
    assert asked_history == [{"limit": 1, "metadata": {"run_id": oldest["run_id"]}}]

    # The fourth turn's hop: found on the second page; its own turn's answer.
    (fourth,) = [
        s for s in app.get_state_history(config) if s.next == ("desk",) and s.values["turn"] == 4
    ]
    calls.clear()
    replayed = app.invoke(None, fourth.config)
    assert replayed["ledger"][-1] == outs[3]["ledger"][-1]
    assert [kwargs["offset"] for name, kwargs in calls if name == "list_runs"] == [0, 2]
    assert len(_remote_runs(server_b, thread)) == 7


def test_a_remote_review_surfaces_at_the_root_and_resumes_in_the_remote_thread(
    server_b: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    root_thread = config["configurable"]["thread_id"]
    paused = app.invoke(ROLL_BACK, config, version="v2")
    (pending,) = paused.interrupts
    thread = remote_thread_id(root_thread, ("ops",), "ops")
    (remote,) = interrupts(get_sync_client(url=server_b).threads.get(thread))
    # The remote gate's HITL payload and response schema, with the path from the root.
    value = pending.value
    assert value["action_requests"] == remote["value"]["action_requests"]
    assert value["review_configs"] == remote["value"]["review_configs"]
    assert pending.response_schema == remote["response_schema"]
    assert value["context"]["path"] == ["ops", "clerk"]
    assert value["context"]["thread_id"] == root_thread
    assert value["context"]["remote"] == {
        "graph_id": "ops",
        "thread_id": thread,
        "interrupt_id": remote["id"],
    }
    assert app.get_state(config).interrupts[0].id == pending.id

    # A refused answer is never forwarded: the same review, same id, at the root.
    refused = app.invoke(Command(resume={pending.id: "approve"}), config, version="v2")
    (again,) = refused.interrupts
    assert again.id == pending.id
    assert "invalid_answer" in again.value["context"]
    assert again.value["action_requests"] == value["action_requests"]
    assert len(_remote_runs(server_b, thread)) == 1

    # The right answer, by the root's interrupt id, resumes the remote thread.
    done = app.invoke(
        Command(resume={pending.id: {"decisions": [{"type": "approve"}]}}), config, version="v2"
    )
    assert done.interrupts == ()
    out = done.value
    assert out["status"] == "done"
    assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("ops", "success")]
    assert out["messages"][-1].content == "Rolled back the database service."
    (record,) = out["reviews"]
    assert (record["interrupt_id"], record["path"], record["decision"]) == (
        pending.id,
        ["ops", "clerk"],
        "approve",
    )
    remote_state = _remote_state(server_b, thread)
    assert remote_state["status"] == "done"
    assert remote_state["messages"][-1]["content"] == "Rolled back the database service."
    runs = sorted(r["metadata"]["lgsp_run"] for r in _remote_runs(server_b, thread))
    assert runs == ["1:1", "1:1:resume:0"]  # one start, one forwarded answer

    # Replaying the resumed hop forwards nothing again and starts no run.
    (before,) = [s for s in app.get_state_history(config) if s.next == ("ops",)][-1:]
    replay = app.invoke(None, before.config)
    assert replay["ledger"][-1]["status"] == "success"
    assert len(_remote_runs(server_b, thread)) == 2

    # A second turn (the clerk, its rollback done, answers at once): the remote thread
    # moves on to turn 2.
    assert app.invoke(ROLL_BACK, config)["status"] == "done"
    assert _remote_state(server_b, thread)["turn"] == 2
    assert len(_remote_runs(server_b, thread)) == 3
    # Back to the first turn's hop: its result is the end of the run that took its answer
    # (the hop's own run ended at the review), read back by that run's id.
    calls = _spied_calls(monkeypatch)
    (first,) = [
        s for s in app.get_state_history(config) if s.next == ("ops",) and s.values["turn"] == 1
    ][-1:]
    back = app.invoke(None, first.config)
    assert back["ledger"] == out["ledger"]
    assert back["messages"][-1].content == "Rolled back the database service."
    assert [r["interrupt_id"] for r in back["reviews"]] == [pending.id]
    assert len(_remote_runs(server_b, thread)) == 3
    (resumed,) = [
        r for r in _remote_runs(server_b, thread) if r["metadata"]["lgsp_run"] == "1:1:resume:0"
    ]
    asked_history = [kwargs for name, kwargs in calls if name == "get_history"]
    assert asked_history == [{"limit": 1, "metadata": {"run_id": resumed["run_id"]}}]


def test_the_review_desk_lists_and_answers_a_remote_review_at_the_root(server_b: str) -> None:
    from langgraph_supervisor_pro.review import list_reviews, resolve_review
    from langgraph_supervisor_pro.review._desk import Approve

    saver = InMemorySaver()
    app = build(server_b).compile(checkpointer=saver)
    config = _config()
    root_thread = config["configurable"]["thread_id"]
    app.invoke(ROLL_BACK, config)
    (review,) = list_reviews(saver, thread_ids=[root_thread])
    assert (review.thread_id, review.path, review.action) == (
        root_thread,
        ("ops", "clerk"),
        "rollback",
    )
    out = resolve_review(app, thread_id=root_thread, decision=Approve(), reviewer="alice")
    assert out["status"] == "done"
    (record,) = out["reviews"]
    assert (record["interrupt_id"], record["reviewer"]) == (review.interrupt_id, "alice")


def test_a_remote_domain_inside_a_local_domain_pauses_and_resumes_two_levels_down(
    server_b: str,
) -> None:
    def once(name: str) -> Any:
        def router(view: SupervisorView) -> str:
            return "FINISH" if view.ledger else name

        return router

    remote = Worker(name="ops", description="Ops (remote).", agent=RemoteGraph("ops", url=server_b))
    region = create_supervisor([remote], router=once("ops"), name="region")
    app = create_supervisor(
        [Worker(name="region", description="A region.", agent=region)], router=once("region")
    ).compile(checkpointer=InMemorySaver())
    config = _config()
    (pending,) = app.invoke(ROLL_BACK, config, version="v2").interrupts
    assert pending.value["context"]["path"] == ["region", "ops", "clerk"]
    thread = remote_thread_id(config["configurable"]["thread_id"], ("region", "ops"), "ops")
    assert pending.value["context"]["remote"]["thread_id"] == thread
    resume: Command[Any] = Command(resume={pending.id: {"decisions": [{"type": "approve"}]}})
    parts = list(app.stream(resume, config, stream_mode=["custom", "values"], subgraphs=True))
    # The remote run's events, relayed inside the local domain: under its namespace.
    custom = [(ns, chunk) for ns, mode, chunk in parts if mode == "custom"]
    relayed = _relayed([chunk for _, chunk in custom])
    assert relayed and len(relayed) == len(custom)
    assert {tuple(e[REMOTE_EVENT_KEY]["path"]) for e in relayed} == {("region", "ops")}
    assert all(ns and ns[0].partition(":")[0] == "region" for ns, _ in custom)
    out = app.get_state(config).values
    assert out["status"] == "done"
    assert out["messages"][-1].content == "Rolled back the database service."
    (record,) = out["reviews"]
    assert (record["interrupt_id"], record["path"]) == (pending.id, ["region", "ops", "clerk"])
    assert _remote_state(server_b, thread)["status"] == "done"


async def test_the_async_root_pauses_and_resumes_the_remote_review(server_b: str) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    (pending,) = (await app.ainvoke(ROLL_BACK, config, version="v2")).interrupts
    assert pending.value["context"]["path"] == ["ops", "clerk"]
    out = await app.ainvoke(Command(resume={"decisions": [{"type": "reject"}]}), config)
    assert out["status"] == "done"
    (record,) = out["reviews"]
    assert record["decision"] == "reject" and record["interrupt_id"] == pending.id


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_root_killed_during_the_remote_hop_resumes_without_starting_it_again(
    server_b: str, pg_database: str, tmp_path: Path, mode: str
) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.integration import _remote_crash_app
    from tests.integration._proc import child_env

    script = str(Path(_remote_crash_app.__file__).resolve())
    root_thread = f"crash-{uuid.uuid4().hex[:8]}"
    args = [script, "--url", server_b, "--db", pg_database, "--thread", root_thread]
    args += ["--mode", mode]
    thread = remote_thread_id(root_thread, ("far",), "slow")
    sdk = get_sync_client(url=server_b)
    log = (tmp_path / "first.log").open("wb")
    first = subprocess.Popen([sys.executable, *args], stdout=log, stderr=log, env=child_env())
    try:
        deadline = time.monotonic() + 60
        while not _started(sdk, thread):  # the remote run exists: the hop is in flight
            assert first.poll() is None, (tmp_path / "first.log").read_text()
            assert time.monotonic() < deadline, "the remote run never started"
            time.sleep(0.05)
        os.kill(first.pid, signal.SIGKILL)
    finally:
        first.kill()
        first.wait(timeout=30)
        log.close()
    resumed = subprocess.run(
        [sys.executable, *args, "--resume"],
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    out = json.loads(resumed.stdout.strip().splitlines()[-1])
    assert out["status"] == "done"
    assert [(e["worker"], e["status"], e["summary"]) for e in out["ledger"]] == [
        ("far", "success", "Finally done.")
    ]
    (run,) = _remote_runs(server_b, thread)  # joined after the crash, not started again
    assert run["metadata"]["lgsp_run"] == "1:1" and run["status"] == "success"


def _started(sdk: Any, thread: str) -> bool:
    try:
        return bool(sdk.runs.list(thread, limit=5))
    except Exception:  # the thread does not exist yet
        return False


# -- failures are failed hops ------------------------------------------------------------


def _alone(agent: RemoteGraph, timeout: float = 30) -> Any:
    def once(view: SupervisorView) -> str:
        return "FINISH" if view.ledger else "far"

    worker = Worker(
        name="far", description="Far away.", agent=agent, retry=NO_WAIT, timeout=timeout
    )
    return create_supervisor([worker], router=once).compile(checkpointer=InMemorySaver())


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_server_that_is_down_is_a_failed_hop_with_no_password_shown(mode: str) -> None:
    import httpx
    from langgraph_sdk.client import LangGraphClient, SyncLangGraphClient

    url = f"http://ops:s3cr3t-pw@127.0.0.1:{_free_port()}"
    # The SDK's own clients retry a refused connection five times (seconds of backoff);
    # these do not, so the test is quick. The worker's retry policy still applies.
    remote = RemoteGraph(
        "ops",
        sync_client=SyncLangGraphClient(httpx.Client(base_url=url)),
        client=LangGraphClient(httpx.AsyncClient(base_url=url)),
    )
    app = _alone(remote)
    out = app.invoke(NOTE, _config()) if mode == "sync" else await app.ainvoke(NOTE, _config())
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert (
        "RemoteDomainUnavailable: remote domain 'far' (graph 'ops' at http://ops:***@127.0.0.1:"
        in (entry["error"])
    )
    assert "unreachable" in entry["error"]
    assert "s3cr3t-pw" not in json.dumps(out, default=str)


def test_a_plain_remote_question_is_asked_at_the_root_and_its_answer_forwarded(
    server_b: str,
) -> None:
    app = _alone(RemoteGraph("asks", url=server_b))
    config = _config()
    (pending,) = app.invoke(NOTE, config, version="v2").interrupts
    assert pending.value == "Which region?"  # not a review: shown as the remote asked it
    out = app.invoke(Command(resume={pending.id: "eu-west"}), config)
    (entry,) = out["ledger"]
    assert entry["status"] == "success" and entry["summary"] == "Deploying to eu-west."


def test_a_remote_graph_without_the_drivers_client_is_a_failed_hop(server_b: str) -> None:
    from langgraph_sdk import get_client

    out = _alone(RemoteGraph("desk", client=get_client(url=server_b))).invoke(NOTE, _config())
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert "has no sync client" in entry["error"]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_remote_run_that_overruns_the_timeout_is_a_failed_hop_run_once(
    server_b: str, mode: str
) -> None:
    app = _alone(RemoteGraph("slow", url=server_b), timeout=0.5)
    config = _config()
    out = app.invoke(NOTE, config) if mode == "sync" else await app.ainvoke(NOTE, config)
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert "WorkerTimeoutError" in entry["error"]
    thread = remote_thread_id(config["configurable"]["thread_id"], ("far",), "slow")
    (run,) = _remote_runs(server_b, thread)  # the retry joined the run, not a second one
    assert run["metadata"]["lgsp_run"] == "1:1"


def test_a_remote_run_that_fails_is_a_failed_hop(server_b: str) -> None:
    out = _alone(RemoteGraph("broken", url=server_b)).invoke(NOTE, _config())
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert "the remote run failed" in entry["error"]
    assert "the disk is full" in entry["error"]


def test_an_unknown_remote_graph_is_a_failed_hop(server_b: str) -> None:
    out = _alone(RemoteGraph("nosuch", url=server_b)).invoke(NOTE, _config())
    (entry,) = out["ledger"]
    assert entry["status"] == "failed"
    assert "the server refused the request (HTTP 4" in entry["error"]


# -- the remote run's stream at the root -------------------------------------------------


def _relayed(chunks: list[Any]) -> list[dict[str, Any]]:
    """The remote stream events among a root's `custom` stream chunks, in order."""
    events = [remote_stream_event(chunk) for chunk in chunks]
    return [dict(event) for event in events if event is not None]


def _custom(parts: Any) -> list[Any]:
    return [chunk for mode, chunk in parts if mode == "custom"]


def _run_ids(url: str, thread: str) -> dict[str, str]:
    return {r["metadata"]["lgsp_run"]: r["run_id"] for r in _remote_runs(url, thread)}


def test_the_remote_runs_tokens_reach_the_roots_stream_once_each(server_b: str) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    thread = remote_thread_id(config["configurable"]["thread_id"], ("ops",), "ops")
    first = _relayed(_custom(app.stream(ROLL_BACK, config, stream_mode=["updates", "custom"])))
    runs = _run_ids(server_b, thread)
    source = {"path": ["ops"], "graph_id": "ops", "thread_id": thread, "run_id": runs["1:1"]}
    assert first and all(event[REMOTE_EVENT_KEY] == source for event in first)
    # The clerk's model call, streamed inside the remote domain's worker subgraph.
    (call,) = [e for e in first if e["mode"] == "messages" and e["data"][0].get("tool_calls")]
    assert call["ns"][0].startswith("clerk:")
    chunk, metadata = call["data"]
    assert chunk["type"] == "AIMessageChunk" and chunk["tool_calls"][0]["name"] == "rollback"
    assert metadata["langgraph_node"] == "model"
    (pending,) = app.get_state(config).interrupts

    # The answer's run streams the clerk's answer token by token; the first run's events
    # (its run has finished) are not relayed again when the hop's node runs again.
    resume: Command[Any] = Command(resume={pending.id: {"decisions": [{"type": "approve"}]}})
    second = _relayed(_custom(app.stream(resume, config, stream_mode=["updates", "custom"])))
    runs = _run_ids(server_b, thread)
    assert {e[REMOTE_EVENT_KEY]["run_id"] for e in second} == {runs["1:1:resume:0"]}
    clerk = [e["data"][0] for e in second if e["mode"] == "messages" and e["ns"]]
    assert clerk[0] == {**clerk[0], "type": "tool", "content": "rolled back database"}
    tokens = [m["content"] for m in clerk if m["type"] == "AIMessageChunk"]
    assert len(tokens) > 1 and "".join(tokens) == "Rolled back the database service."
    assert app.get_state(config).values["status"] == "done"


async def test_the_async_root_relays_the_remote_runs_messages_and_custom_events(
    server_b: str,
) -> None:
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config = _config()
    chunks = [chunk async for chunk in app.astream(NOTE, config, stream_mode="custom")]
    events = _relayed(chunks)
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    assert {e[REMOTE_EVENT_KEY]["thread_id"] for e in events} == {thread}
    # What the remote worker wrote with its stream writer, as it wrote it.
    (custom,) = [e for e in events if e["mode"] == "custom"]
    assert custom["data"] == {"filing": "Task: File a note about the outage"}
    # The remote domain's answer, in its messages stream.
    answers = [e["data"][0]["content"] for e in events if e["mode"] == "messages"]
    assert "Filed a note about: Task: File a note about the outage" in answers
    assert (await app.aget_state(config)).values["status"] == "done"


def test_a_relay_that_starts_late_still_reads_the_run_from_its_first_event(
    server_b: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As when the hop joins a run a crashed process started: the run is over (or well
    # under way) before its stream is read; it was started resumable, read from the start.
    real = remote_hop._Api.relay

    def late(api: Any, thread: str, run_id: str, relay: Any) -> Call:
        get_sync_client(url=server_b).runs.join(thread, run_id)  # the run has finished
        return real(api, thread, run_id, relay)

    monkeypatch.setattr(remote_hop._Api, "relay", late)
    app = build(server_b).compile(checkpointer=InMemorySaver())
    events = _relayed(list(app.stream(NOTE, _config(), stream_mode="custom")))
    assert [e["data"] for e in events if e["mode"] == "custom"] == [
        {"filing": "Task: File a note about the outage"}
    ]


def test_a_relay_that_breaks_off_leaves_the_hop_as_it_was(
    server_b: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(api: Any, thread: str, run_id: str, relay: Any) -> Call:
        def fail() -> None:
            raise ConnectionError("the stream broke off")

        return Call(fail, None)

    monkeypatch.setattr(remote_hop._Api, "relay", broken)
    app = build(server_b).compile(checkpointer=InMemorySaver())
    parts = list(app.stream(NOTE, _config(), stream_mode=["values", "custom"]))
    assert _relayed(_custom(parts)) == []
    final = [chunk for mode, chunk in parts if mode == "values"][-1]
    assert final["status"] == "done" and final["ledger"][0]["status"] == "success"


# -- a root on server A, domains on server B ---------------------------------------------


def test_a_root_served_by_one_server_delegates_to_domains_on_another(server_a: str) -> None:
    async def go() -> None:
        sdk = client(server_a)
        root = await assistant_id(sdk, "root")
        thread = (await sdk.threads.create())["thread_id"]
        out = await sdk.runs.wait(thread, root, input=NOTE)
        assert out["status"] == "done"
        assert [(e["worker"], e["status"]) for e in out["ledger"]] == [("desk", "success")]
        # Streamed from server A, the root relays the remote run's events on server B.
        thread = (await sdk.threads.create())["thread_id"]
        parts = [p async for p in sdk.runs.stream(thread, root, input=NOTE, stream_mode="custom")]
        relayed = _relayed([p.data for p in parts if p.event == "custom"])
        assert [e["data"] for e in relayed if e["mode"] == "custom"] == [
            {"filing": "Task: File a note about the outage"}
        ]
        assert {e[REMOTE_EVENT_KEY]["path"][0] for e in relayed} == {"desk"}

        thread = (await sdk.threads.create())["thread_id"]
        await sdk.runs.wait(thread, root, input=ROLL_BACK)
        state = await sdk.threads.get(thread)
        assert state["status"] == "interrupted"
        (pending,) = interrupts(state)
        assert pending["value"]["context"]["path"] == ["ops", "clerk"]
        await sdk.runs.wait(thread, root, command={"resume": {pending["id"]: "approve"}})
        (again,) = interrupts(await sdk.threads.get(thread))
        assert again["id"] == pending["id"] and "invalid_answer" in again["value"]["context"]
        out = await sdk.runs.wait(
            thread,
            root,
            command={"resume": {pending["id"]: {"decisions": [{"type": "approve"}]}}},
        )
        assert (await sdk.threads.get(thread))["status"] == "idle"
        assert out["status"] == "done"
        assert out["messages"][-1]["content"] == "Rolled back the database service."
        (record,) = out["reviews"]
        assert (record["interrupt_id"], record["path"]) == (pending["id"], ["ops", "clerk"])

    asyncio.run(go())


def test_a_remote_domains_own_remote_domain_streams_to_the_root_once_flattened(
    server_a: str, server_b: str
) -> None:
    # This process's root -> server A's root (a remote domain) -> server B's desk.
    worker = Worker(name="far", description="Far away.", agent=RemoteGraph("root", url=server_a))
    app = create_supervisor([worker], router=lambda view: "FINISH" if view.ledger else "far")
    root = app.compile(checkpointer=InMemorySaver())
    config = _config()
    relayed = _relayed(list(root.stream(NOTE, config, stream_mode="custom")))
    (filing,) = [e for e in relayed if e["mode"] == "custom"]
    assert "filing" in filing["data"]
    source = filing[REMOTE_EVENT_KEY]
    assert (source["path"], source["graph_id"]) == (["far", "desk"], "desk")
    on_a = remote_thread_id(config["configurable"]["thread_id"], ("far",), "root")
    assert source["thread_id"] == remote_thread_id(on_a, ("desk",), "desk")
    assert source["run_id"] in _run_ids(server_b, source["thread_id"]).values()
    # Server A's root's own answer comes from server A's run.
    assert any(e[REMOTE_EVENT_KEY]["graph_id"] == "root" for e in relayed)


# -- one trace across both servers -------------------------------------------------------


def test_the_remote_domains_spans_join_the_roots_trace_beneath_the_hop(
    server_b: str, spans_file: Path
) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from langgraph_supervisor_pro.observability import OTelCallbackHandler

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    app = build(server_b).compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {
        **_config(),
        "callbacks": [OTelCallbackHandler(tracer_provider=provider)],
    }
    assert app.invoke(NOTE, config)["status"] == "done"
    (hop,) = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent desk"]
    (handoff,) = [e for e in hop.events if e.name == "lgsp.handoff"]
    assert (handoff.attributes or {})["lgsp.handoff.to"] == "desk"
    trace_id = format(hop.context.trace_id, "032x")
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    remote = [
        span
        for span in map(json.loads, spans_file.read_text().splitlines())
        if span["attributes"].get("gen_ai.conversation.id") == thread
    ]
    assert remote, "server B recorded no span for the remote thread"
    assert {span["trace_id"] for span in remote} == {trace_id}
    ids = {span["span_id"] for span in remote}
    (top,) = [span for span in remote if span["parent_id"] not in ids]
    assert top["parent_id"] == format(hop.context.span_id, "016x")
    # The remote run's root span, with the domain's decisions and hop beneath it.
    assert top["name"] == "invoke_agent desk"
    below = {span["name"] for span in remote if span["parent_id"] == top["span_id"]}
    assert {"invoke_agent desk", "invoke_agent notes", "invoke_agent synthesis"} <= below


# -- LangSmith distributed tracing ------------------------------------------------------


@pytest.mark.parametrize("distributed", [True, False], ids=["distributed", "not-asked"])
def test_distributed_tracing_sends_the_hops_langsmith_trace_to_the_remote_run(
    server_b: str, langsmith_server: CaptureServer, distributed: bool
) -> None:
    """`RemoteGraph(..., distributed_tracing=True)`: the remote run gets the hop's run as
    its LangSmith parent (`langsmith-trace` and `baggage`, as `RemoteGraph.invoke` sends
    them), which a LangGraph server puts in the run's `configurable`. (This `langgraph
    dev` stores it but still traces the run as a trace of its own.)"""
    worker = Worker(
        name="desk",
        description="The help desk (remote).",
        agent=RemoteGraph("desk", url=server_b, distributed_tracing=distributed),
        retry=NO_WAIT,
        timeout=60,
    )
    app = create_supervisor(
        [worker], router=lambda view: "FINISH" if view.ledger else "desk"
    ).compile(checkpointer=InMemorySaver())
    client = langsmith_server.client()
    tracer = LangChainTracer(client=client, project_name="lgsp-root")
    config: dict[str, Any] = {**_config(), "callbacks": [tracer]}
    assert app.invoke(NOTE, config)["status"] == "done"
    tracer.wait_for_futures()
    client.flush()
    (hop,) = [r for r in langsmith_server.runs().values() if r.get("name") == "desk.remote"]
    thread = remote_thread_id(config["configurable"]["thread_id"], ("desk",), "desk")
    (run,) = _remote_runs(server_b, thread)
    sent: dict[str, Any] = dict(get_sync_client(url=server_b).runs.get(thread, run["run_id"]))
    configurable = sent["kwargs"]["config"]["configurable"]
    if distributed:
        assert configurable["langsmith-trace"] == hop["dotted_order"]
        project = configurable.get("langsmith-project")
        assert project in (None, "lgsp-root")
    else:
        assert "langsmith-trace" not in configurable
