"""The `lgsp` command: the offline demo, project templates, runs and the review desk.

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/cli/

Example:
    ```console
    $ lgsp demo --yes
    $ lgsp review list --db postgresql://... --graph app.py:graph
    ```
"""

from langgraph_supervisor_pro.cli._commands import app, main

__all__ = ["app", "main"]
