from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest
from langgraph.graph import START, StateGraph

from langgraph_supervisor_pro.persistence import server_checkpointer
from langgraph_supervisor_pro.persistence._checkpointers import _AsyncPostgresSaver
from langgraph_supervisor_pro.persistence._server import CHECKPOINTER_URI_ENV


class State(TypedDict):
    trail: Annotated[list[str], operator.add]


def _graph(saver):  # type: ignore[no-untyped-def]
    builder = StateGraph(State)
    builder.add_node("step", lambda state: {"trail": ["step"]})
    builder.add_edge(START, "step")
    return builder.compile(checkpointer=saver)


async def _open(environ: dict[str, str], **options: object) -> None:
    async with server_checkpointer(environ=environ, **options):  # type: ignore[arg-type]
        pass


async def test_opens_our_saver_on_database_uri_with_forks_allowed(pg_database, monkeypatch):
    monkeypatch.setenv("DATABASE_URI", pg_database)
    monkeypatch.delenv(CHECKPOINTER_URI_ENV, raising=False)
    async with server_checkpointer() as saver:
        assert isinstance(saver, _AsyncPostgresSaver)
        assert (saver.fence, saver.keep_agent_checkpoints) == (False, False)
        graph = _graph(saver)
        cfg = {"configurable": {"thread_id": "t"}}
        await graph.ainvoke({"trail": ["in"]}, cfg, durability="sync")
        await graph.ainvoke({"trail": ["in"]}, cfg, durability="sync")
        history = [s async for s in graph.aget_state_history(cfg)]
        older = next(s for s in history if s.values == {"trail": ["in", "step"]}).config
        # Studio's edit of an older checkpoint (a fork): no fence, no `lgsp_fork` needed.
        await graph.aupdate_state(older, {"trail": ["edited"]})
        assert (await graph.aget_state(cfg)).values["trail"] == ["in", "step", "edited"]


async def test_checkpointer_uri_wins_over_database_uri(pg_database):
    environ = {CHECKPOINTER_URI_ENV: pg_database, "DATABASE_URI": ":memory:"}
    async with server_checkpointer(environ=environ, keep_agent_checkpoints=True) as saver:
        assert isinstance(saver, _AsyncPostgresSaver)
        assert saver.keep_agent_checkpoints is True


async def test_no_url_names_both_settings():
    with pytest.raises(ValueError, match=f"neither {CHECKPOINTER_URI_ENV} nor DATABASE_URI"):
        await _open({"DATABASE_URI": "  "})


async def test_langgraph_dev_in_memory_runtime_is_named():
    with pytest.raises(ValueError, match=r"langgraph dev.*leave the `checkpointer` line out"):
        await _open({"DATABASE_URI": ":memory:"})


@pytest.mark.parametrize("name", [CHECKPOINTER_URI_ENV, "DATABASE_URI"])
async def test_not_postgres_is_refused_password_masked(name):
    with pytest.raises(ValueError, match=rf"{name}=.*is not a Postgres URL") as caught:
        await _open({name: "mysql://app:hunter2-pw@db:3306/app"})
    assert "hunter2-pw" not in str(caught.value)


async def test_options_are_validated(pg_database):
    with pytest.raises(TypeError, match="keep_agent_checkpoints"):
        await _open({"DATABASE_URI": pg_database}, keep_agent_checkpoints="no")
    with pytest.raises(ValueError, match="pool_size"):
        await _open({"DATABASE_URI": pg_database}, pool_size=0)
