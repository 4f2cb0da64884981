"""Deterministic chat models for tests: ours, and yours.

Example:
    ```python
    from langgraph_supervisor_pro.testing import ScriptedChatModel

    model = ScriptedChatModel(script=["Hello!"])
    assert model.invoke("hi").content == "Hello!"
    model.assert_complete()
    ```
"""

from langgraph_supervisor_pro.testing.scripted import (
    FunctionChatModel,
    ScriptedCall,
    ScriptedChatModel,
    ScriptExhaustedError,
    ScriptReply,
    ScriptStep,
)

__all__ = [
    "FunctionChatModel",
    "ScriptExhaustedError",
    "ScriptReply",
    "ScriptStep",
    "ScriptedCall",
    "ScriptedChatModel",
]
