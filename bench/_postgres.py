"""A throw-away Postgres database for the benchmark, and per-thread checkpoint sizes.

The server is `$LGSP_POSTGRES_URI` when set, else an embedded one started with the
test suite's `pgserver` helpers. The benchmark gets its own database (created with
autocommit, dropped at the end), so nothing else's checkpoints or store items are
counted.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import psycopg
from psycopg import sql

from tests._pg import (
    ENV_VAR,
    create_database,
    drop_database,
    start_embedded_postgres,
    unique_database_name,
)

CHECKPOINT_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
"""The Postgres saver's tables; each row carries the thread id."""


@contextmanager
def bench_database() -> Iterator[tuple[str, str]]:
    """Yield `(database URI, where the server came from)` for a fresh database; drop it after.

    Raises:
        RuntimeError: No server in `$LGSP_POSTGRES_URI` and no embedded one could start.
    """
    server_uri = os.environ.get(ENV_VAR, "").strip()
    embedded = None
    source = f"${ENV_VAR}"
    if not server_uri:
        embedded = start_embedded_postgres()
        server_uri, source = embedded.uri, "embedded pgserver"
    name = unique_database_name("lgsp_bench")
    try:
        database_uri = create_database(server_uri, name)
        try:
            yield database_uri, source
        finally:
            drop_database(server_uri, name)
    finally:
        if embedded is not None:
            embedded.stop()


def server_version(database_uri: str) -> str:
    """The server's `server_version` setting, e.g. '15.20 (Debian ...)'."""
    with psycopg.connect(database_uri) as conn:
        row = conn.execute("SHOW server_version").fetchone()
    return str(row[0]) if row else "?"


def thread_bytes(database_uri: str, thread_id: str) -> dict[str, int]:
    """Stored bytes of one thread's rows, per checkpoint table (`pg_column_size` of each row).

    A whole-row `pg_column_size` counts each value as stored: TOAST-compressed values at
    their compressed size, plus the row header.
    """
    sizes: dict[str, int] = {}
    with psycopg.connect(database_uri) as conn:
        for table in CHECKPOINT_TABLES:
            query = sql.SQL(
                "SELECT coalesce(sum(pg_column_size(t.*)), 0) FROM {} AS t WHERE thread_id = %s"
            ).format(sql.Identifier(table))
            row = conn.execute(query, (thread_id,)).fetchone()
            sizes[table] = int(row[0]) if row else 0
    return sizes


def store_bytes(database_uri: str, namespaces: Sequence[tuple[str, ...]]) -> tuple[int, int]:
    """Stored bytes and row count of the `store` table's items in `namespaces`.

    `PostgresStore` keeps a namespace as its parts joined with '.' in the `prefix`
    column; items are sized like checkpoint rows (`pg_column_size` of the whole row).
    """
    prefixes = [".".join(namespace) for namespace in namespaces]
    with psycopg.connect(database_uri) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_column_size(s.*)), 0), count(*) FROM store AS s "
            "WHERE prefix = ANY(%s)",
            (prefixes,),
        ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)
