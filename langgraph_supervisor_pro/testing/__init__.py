"""Deterministic chat models for tests: ours, and yours.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/how-to/testing/

Example:
    ```python
    from langgraph_supervisor_pro.testing import ScriptedChatModel

    model = ScriptedChatModel(script=["Hello!"])
    assert model.invoke("hi").content == "Hello!"
    model.assert_complete()
    ```
"""

from langgraph_supervisor_pro.testing._scripted import (
    FunctionChatModel,
    ScriptedCall,
    ScriptedChatModel,
)

__all__ = ["FunctionChatModel", "ScriptedCall", "ScriptedChatModel"]
