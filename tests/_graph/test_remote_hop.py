"""RemoteHop's refusals before any request: outside a hop, or without a prompt."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.messages import HumanMessage
from langgraph.pregel.remote import RemoteGraph

from langgraph_supervisor_pro._graph.remote_hop import RemoteHop
from langgraph_supervisor_pro._internal.hop import HopContext, with_hop
from langgraph_supervisor_pro.remote import RemoteDomainError

# Port 9 (discard): nothing is sent, every refusal comes before a request.
REMOTE = RemoteGraph("ops", url="http://ops:pw-secret@127.0.0.1:9")


def test_outside_a_hop_it_refuses_and_names_the_domain_with_the_password_masked():
    hop = RemoteHop(REMOTE, worker="ops")
    with pytest.raises(RemoteDomainError, match="no hop context") as caught:
        hop.invoke({"messages": [HumanMessage("hi", id="p1")]})
    assert "remote domain 'ops' (graph 'ops' at http://ops:***@127.0.0.1:9)" in str(caught.value)
    assert "pw-secret" not in str(caught.value)


def test_without_a_prompt_it_refuses():
    hop = RemoteHop(REMOTE, worker="ops")
    context = HopContext(
        worker="ops", step=1, turn=1, task="T", instructions="", dispatched_at=None, tier=None
    )
    config = with_hop({"configurable": {"thread_id": "t"}}, context)
    with pytest.raises(RemoteDomainError, match="prompt"):
        hop.invoke({"messages": []}, config)
    with pytest.raises(RemoteDomainError, match="prompt"):
        asyncio.run(hop.ainvoke({}, config))


def test_an_async_run_without_an_async_client_refuses():
    from langgraph_sdk import get_sync_client

    remote = RemoteGraph("ops", sync_client=get_sync_client(url="http://127.0.0.1:9"))
    with pytest.raises(RemoteDomainError, match="has no async client"):
        asyncio.run(RemoteHop(remote, worker="ops").ainvoke({"messages": []}))
