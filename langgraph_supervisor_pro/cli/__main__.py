"""`python -m langgraph_supervisor_pro.cli`: the `lgsp` command."""

from langgraph_supervisor_pro.cli._commands import main

main()
