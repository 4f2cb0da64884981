"""The `lgsp` command: the offline demo, project templates, runs and the review desk.

Example:
    ```console
    $ lgsp demo --yes
    $ lgsp review list --db postgresql://... --graph app.py:graph
    ```
"""

from langgraph_supervisor_pro.cli.commands import DEFAULT_DEMO_DB, app, main, review_app

__all__ = ["DEFAULT_DEMO_DB", "app", "main", "review_app"]
