"""The graph's node names are defined once and are the names the builder uses."""

from langgraph_supervisor_pro import Compaction, Worker, create_supervisor
from langgraph_supervisor_pro._graph.names import (
    COMPACTION_NODE,
    REVIEW_NODE,
    SUPERVISOR_NODE,
    SYNTHESIS_NODE,
)
from langgraph_supervisor_pro.testing import ScriptedChatModel
from tests._helpers import routes


def test_the_builder_names_its_nodes_from_one_module():
    worker = Worker(name="a", description="A.", agent=lambda t: "ok")
    graph = create_supervisor(
        [worker],
        router=routes("a"),
        compaction=Compaction(summarizer=ScriptedChatModel(script=["s"]), max_context_tokens=1000),
    )
    assert {SUPERVISOR_NODE, SYNTHESIS_NODE, COMPACTION_NODE, REVIEW_NODE, "a"} <= set(graph.nodes)
