"""Postgres helpers shared by the test fixtures and by subprocess-based tests.

Plain functions (no pytest import) so that a child process started by a crash
test can use them too, e.g. ``from _pg import database_uri``.

Where the server comes from:

- ``LGSP_POSTGRES_URI`` set: that server is used as is (any database on it
  works; tests create and drop their own databases next to it).
- otherwise an embedded server is started with the ``pgserver`` package in a
  temporary directory. When the tests run as root (common in containers),
  PostgreSQL itself refuses to run as root; ``pgserver`` handles this by creating
  an unprivileged system user ``pgserver`` (``useradd``), giving it the data
  directory and running ``initdb``/``pg_ctl`` as that user. It also makes the
  parent directories of the data directory and of its bundled binaries
  traversable by other users (``chmod go+rx``).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

ENV_VAR = "LGSP_POSTGRES_URI"


def database_uri(server_uri: str, dbname: str) -> str:
    """Return ``server_uri`` pointing at database ``dbname`` (host, user, query kept)."""
    parts = urlsplit(server_uri)
    return urlunsplit((parts.scheme, parts.netloc, f"/{dbname}", parts.query, parts.fragment))


def unique_database_name(prefix: str = "lgsp_test") -> str:
    """Return a fresh database name that is a valid unquoted identifier."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def create_database(server_uri: str, dbname: str) -> str:
    """Create database ``dbname`` on the server of ``server_uri`` and return its URI."""
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(dbname)))
    return database_uri(server_uri, dbname)


def drop_database(server_uri: str, dbname: str) -> None:
    """Drop ``dbname``, terminating any connection still open on it (PostgreSQL >= 13)."""
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(dbname))
        )


def table_names(uri: str, schema: str = "public") -> set[str]:
    """Return the names of the tables of ``schema`` in the database of ``uri``."""
    with psycopg.connect(uri) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
    return {row[0] for row in rows}


@dataclass
class EmbeddedPostgres:
    """A throw-away PostgreSQL server run by ``pgserver`` in a temporary directory."""

    uri: str
    directory: Path
    _server: Any

    def stop(self) -> None:
        """Stop the server and delete its data directory."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                self._server.cleanup()
            finally:
                shutil.rmtree(self.directory, ignore_errors=True)


def start_embedded_postgres() -> EmbeddedPostgres:
    """Start an embedded server with ``pgserver`` (works as root, see module docstring).

    ``pgserver`` emits warnings on import and start (e.g. platformdirs'
    ``RuntimeDirWarning`` when ``XDG_RUNTIME_DIR`` is unset); they are silenced
    here because the test suite turns warnings into errors.
    """
    directory = Path(tempfile.mkdtemp(prefix="lgsp-pgserver-"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from pgserver.postgres_server import get_server

            server = get_server(directory, cleanup_mode="delete")
            uri = server.get_uri()
    except Exception as exc:
        shutil.rmtree(directory, ignore_errors=True)
        raise RuntimeError(
            f"Could not start an embedded Postgres with pgserver ({type(exc).__name__}: {exc}). "
            f"Set {ENV_VAR}=postgresql://user:password@host:5432/dbname to use an existing "
            "server instead. As root, pgserver needs 'useradd' to create its 'pgserver' user."
        ) from exc
    return EmbeddedPostgres(uri=uri, directory=directory, _server=server)


def _pgserver(directory: Path, cleanup_mode: str) -> Any:
    """`pgserver.get_server`, with its import and start warnings silenced (see above)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pgserver.postgres_server import get_server

        return get_server(directory, cleanup_mode=cleanup_mode)


class RestartablePostgres:
    """An embedded server a test can stop and start again: same data, same URI.

    For outage tests (the shared server of the fixtures must stay up). `stop()` shuts
    the server down (`pg_ctl stop`: open connections are terminated) and keeps its data;
    `start()` brings it back on the same Unix socket; `close()` stops it for good and
    deletes the data.
    """

    def __init__(self) -> None:
        self.directory = Path(tempfile.mkdtemp(prefix="lgsp-pgserver-"))
        self._data = self.directory / "data"
        try:
            self._server: Any = _pgserver(self._data, "stop")
            self.uri: str = self._server.get_uri()
        except Exception as exc:
            shutil.rmtree(self.directory, ignore_errors=True)
            raise RuntimeError(
                f"Could not start an embedded Postgres with pgserver ({type(exc).__name__}: "
                f"{exc}). As root, pgserver needs 'useradd' to create its 'pgserver' user."
            ) from exc
        self.running = True

    def stop(self) -> None:
        """Shut the server down, keeping its data."""
        if self.running:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self._server.cleanup()
            self.running = False

    def start(self) -> None:
        """Start the server again on the same data and socket."""
        if not self.running:
            self._server = _pgserver(self._data, "stop")
            self.running = True
            if self._server.get_uri() != self.uri:
                raise RuntimeError(
                    f"pgserver came back at {self._server.get_uri()}, not {self.uri}"
                )

    def close(self) -> None:
        """Stop the server and delete its data directory."""
        try:
            self.stop()
        finally:
            shutil.rmtree(self.directory, ignore_errors=True)


_WAITING_ON_A_LOCK = (
    "SELECT count(*) FROM pg_stat_activity "
    "WHERE datname = current_database() AND wait_event_type = 'Lock'"
)


def someone_waits_on_a_lock(uri: str, timeout: float = 10.0) -> bool:
    """Wait (bounded) until another session of `uri`'s database waits on a lock."""
    import time

    deadline = time.monotonic() + timeout
    with psycopg.connect(uri, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            row = watcher.execute(_WAITING_ON_A_LOCK).fetchone()
            if row is not None and row[0] >= 1:
                return True
            time.sleep(0.02)
    return False


def wait_until_blocked(uri: str, patience: float) -> None:
    """Return once a backend of `uri`'s database waits on a lock (a statement a test holds).

    Raises:
        AssertionError: No backend waited on a lock within `patience` seconds.
    """
    assert someone_waits_on_a_lock(uri, patience), "the held statement never reached the database"


@contextlib.contextmanager
def while_held(
    uri: str,
    statement: str,
    params: tuple[Any, ...],
    blocked: Callable[[], Any],
    patience: float,
) -> Iterator[concurrent.futures.ThreadPoolExecutor]:
    """Run `blocked` in a thread while a transaction of the test holds it in the database.

    A connection of the test runs `statement` (an insert of the row `blocked` will write)
    and keeps its transaction open; `blocked` starts in a thread and waits in the database
    for that row. The block runs then, with a free thread of the same executor; on leaving,
    `blocked` must still be waiting, the transaction is rolled back, and `blocked` must
    then finish.
    """
    holder = psycopg.connect(uri)
    holder.execute(statement, params)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        try:
            waiting = pool.submit(blocked)
            wait_until_blocked(uri, patience)
            yield pool
            assert not waiting.done()
        finally:
            holder.rollback()
            holder.close()
        waiting.result(timeout=patience)
