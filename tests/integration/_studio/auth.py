"""The custom auth of the auth dev-server tests: bearer tokens naming users.

`auth` is `server_auth` with the graphs' review policy (`policy.toml`): answers are
stamped with the user, and the policy applies before a run is created. `plain` is
LangGraph's `Auth` with the same users and nothing else, to see what the graph gets from
the server on its own (`langgraph_auth_user_id`).
"""

from __future__ import annotations

from pathlib import Path

from langgraph_sdk import Auth

from langgraph_supervisor_pro.review import server_auth
from langgraph_supervisor_pro.review._policy import ReviewPolicy

USERS = {"token-alice": "alice", "token-carol": "carol", "token-mallory": "mallory"}


async def authenticate(authorization: str | None) -> str:
    """The user a bearer token names (401 for any other)."""
    user = USERS.get((authorization or "").removeprefix("Bearer ").strip())
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="unknown token")
    return user


auth = server_auth(
    authenticate=authenticate,
    policy=ReviewPolicy.from_file(Path(__file__).resolve().parent / "policy.toml"),
)

plain = Auth()
plain.authenticate(authenticate)
