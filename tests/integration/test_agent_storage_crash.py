"""SIGKILL inside a tool-calling agent's hop, then resume in a new process (Postgres).

The child (`_storage_crash_app.py`) runs two `create_agent` workers for eight hops with
`open_checkpointer`, so each finished hop's agent checkpoints were deleted; it is killed
inside the tool of hop 7. The agent's checkpoints of that unfinished hop must still be
there: the new process goes on from the agent's last checkpoint (the model call that
chose the tool is not made again), and no finished hop runs twice.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest

from tests.integration import _storage_crash_app as app_module
from tests.integration._proc import kill_and_resume
from tests.integration._storage_crash_app import HOPS, NAMES, hop_of

pytestmark = pytest.mark.integration

KILLED = hop_of("researcher", 4)  # hop 7


def namespaces(uri: str, thread_id: str) -> set[str]:
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = %s", (thread_id,)
        ).fetchall()
    return {row[0] for row in rows}


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_kill_inside_an_agents_tool_then_resume_from_the_agents_checkpoint(
    pg_database, tmp_path, mode
):
    thread_id = f"storage-{uuid.uuid4().hex[:8]}"
    common = ["--uri", pg_database, "--thread", thread_id, "--workdir", str(tmp_path)]
    common += ["--mode", mode]
    held: list[set[str]] = []
    result = kill_and_resume(
        Path(app_module.__file__).resolve(),
        tmp_path,
        common,
        ["--block-hop", str(KILLED)],
        while_blocked=lambda: held.append(namespaces(pg_database, thread_id)),
    )
    # While hop 7 ran, only its agent's namespace was kept beside the root's.
    (kept,) = held[0] - {""}
    assert kept.startswith("researcher:")
    assert result["summary"]["status"] == "done"
    assert result["summary"]["ledger"] == [
        [hop, NAMES[(hop - 1) % 2], "success"] for hop in range(1, HOPS + 1)
    ]
    log = result["log"]
    before = [(e["kind"], e["step"]) for e in log if e["phase"] == "run"]
    after = [(e["kind"], e["step"], e.get("after_tool")) for e in log if e["phase"] == "resume"]
    # Before the kill: hops 1-6 whole, then hop 7's model call and its tool.
    assert before[-2:] == [("model", KILLED), ("tool", KILLED)]
    assert before.count(("tool", KILLED - 1)) == 1
    # After: hop 7's tool again (it was killed inside it) and the model's answer to it,
    # not the call that chose the tool; then hop 8. Nothing before hop 7 ran again.
    assert after[0] == ("tool", KILLED, None)
    assert after[1] == ("model", KILLED, True)
    assert {step for _, step, _ in after} == {KILLED, KILLED + 1}
    assert namespaces(pg_database, thread_id) == {""}
