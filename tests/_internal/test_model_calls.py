"""The usage meter books a compaction's summarizer call by `calling_as`, never by metadata."""

from __future__ import annotations

import asyncio

from langchain_core.messages import HumanMessage
from langchain_core.messages.utils import count_tokens_approximately

from langgraph_supervisor_pro._graph.usage import UsageMeter, UsageRecorder
from langgraph_supervisor_pro._internal.model_calls import calling_as, current_source
from langgraph_supervisor_pro.testing import ScriptedChatModel


def _recorder() -> UsageRecorder:
    return UsageRecorder(UsageMeter(counter=count_tokens_approximately, window=1000))


def test_calls_inside_calling_as_are_the_summarizers_and_metadata_decides_nothing():
    recorder = _recorder()
    model = ScriptedChatModel(script=["a", "b", "c"])
    config = {"callbacks": [recorder]}
    model.invoke([HumanMessage("the hop's own call")], config)
    with calling_as("compaction"):
        model.invoke([HumanMessage("summarise this")], config)
    # Trace metadata claiming a compaction is only trace data.
    model.invoke(
        [HumanMessage("not a summary")], {**config, "metadata": {"lgsp_source": "compaction"}}
    )
    roles = [e["role"] for e in recorder.entries(turn=1, step=1, role="worker", worker="w")]
    assert roles == ["worker", "summarizer", "worker"]
    assert current_source() is None


def test_async_calls_see_the_source_too():
    recorder = _recorder()
    model = ScriptedChatModel(script=["a", "b"])
    config = {"callbacks": [recorder]}

    async def main() -> None:
        with calling_as("compaction"):
            await model.ainvoke([HumanMessage("summarise this")], config)
        await model.ainvoke([HumanMessage("the hop's own call")], config)

    asyncio.run(main())
    roles = [e["role"] for e in recorder.entries(turn=1, step=2, role="worker", worker="w")]
    assert roles == ["summarizer", "worker"]
