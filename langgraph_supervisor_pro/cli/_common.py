"""What the `lgsp` commands share: one-line errors, `--db`/`--store` URLs, `--graph` (private).

Docs: https://langgraph-supervisor-pro.readthedocs.io/en/latest/reference/cli/

Example:
    >>> db_url("postgresql://app:s3cret@db/app")
    ('postgresql://app:s3cret@db/app', 'postgresql://app:***@db/app')
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import os
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any, NoReturn

import typer
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import StateGraph
from langgraph.pregel import Pregel
from langgraph.store.base import BaseStore
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from langgraph_supervisor_pro._internal.durations import duration_seconds
from langgraph_supervisor_pro._internal.text import one_line
from langgraph_supervisor_pro._internal.urls import mask_url
from langgraph_supervisor_pro.persistence._checkpointers import open_checkpointer
from langgraph_supervisor_pro.persistence._effects import open_effects
from langgraph_supervisor_pro.persistence._stores import open_store

EXIT_USAGE = 2
"""The exit code of every error of a command (a bad option, a missing database, ...)."""

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")


def option(flag: str, text: str) -> Any:
    """A command's `flag` option, with help `text` and no default shown."""
    return typer.Option(flag, help=text, show_default=False)


DbOption = Annotated[
    str,
    option(
        "--db", "The checkpoint database: postgresql://..., sqlite:///path.db, or a SQLite file."
    ),
]
GraphOption = Annotated[
    str,
    option(
        "--graph",
        "The runs' graph: path/to/file.py:ATTR or package.module:ATTR, naming an "
        "uncompiled StateGraph or a function returning one (compiled with --db).",
    ),
]
StoreOption = Annotated[
    str | None,
    option(
        "--store",
        "The store the runs' graph is compiled with (its external memory), in --db's forms; "
        "give it when the graph uses one, so a resumed run reads its earlier hops' outputs.",
    ),
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print machine-readable JSON instead of text.")
]


def out(**options: Any) -> Console:
    """The console a command prints its text to."""
    return Console(highlight=False, emoji=False, **options)


def new_table(title: str | None = None, **options: Any) -> Table:
    """A table of a command's output: its title on the left, a rule under the header."""
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, **options)


@contextmanager
def diverted(name: str, handler: logging.Handler) -> Iterator[None]:
    """Send the records of logger `name` to `handler` only (not to stderr) for a while."""
    logger = logging.getLogger(name)
    propagate, logger.propagate = logger.propagate, False
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate


def print_error(text: str) -> None:
    """Print `Error: text` on stderr, unwrapped."""
    Console(stderr=True, highlight=False, soft_wrap=True).print(
        f"[bold red]Error:[/] {escape(text)}", soft_wrap=True
    )


def fail(message: str, *, code: int = EXIT_USAGE) -> NoReturn:
    """Print `Error: message` on one line of stderr and exit with `code` (2 by default)."""
    print_error(one_line(message, 2000))
    raise typer.Exit(code=code)


def error_line(exc: BaseException) -> str:
    """An exception in one line: its type and message."""
    return f"{type(exc).__name__}: {one_line(str(exc), 300)}"


def seconds(text: str, *, flag: str, low: float = 0.0, high: float = float("inf")) -> float:
    """A CLI duration (`90s`, `15m`, `12h`, `30d`, `2w`, or a bare number of seconds).

    Example:
        >>> seconds("2m", flag="--interval"), seconds("5", flag="--interval")
        (120.0, 5.0)
    """
    value = duration_seconds(text)
    if value is None:
        try:
            value = float(text)
        except ValueError:
            value = None
    if value is None or value != value or not low <= value <= high:
        bounds = f"from {low:g}" + ("" if high == float("inf") else f" to {high:g}")
        fail(
            f"{flag}: got {text!r}; give a duration {bounds} seconds, as a number of seconds "
            "or with a unit (90s, 15m, 12h, 30d, 2w)"
        )
    return value


def db_url(db: str, *, flag: str = "--db") -> tuple[str, str]:
    """The URL for `--db` (or `flag`), and how to show it (password masked)."""
    text = db.strip()
    if not text:
        fail(f"{flag} must not be empty; give postgresql://..., sqlite:///path.db or a file")
    if text == "memory" or text.lower() == "sqlite:///:memory:":
        fail(f"{flag} {text} is a fresh, empty in-process database; give the database the runs use")
    match = _SCHEME.match(text)
    scheme = match.group(1).lower() if match and len(match.group(1)) > 1 else ""
    if scheme in ("postgresql", "postgres"):
        return text, mask_url(text)
    if scheme == "sqlite":
        if not text.lower().startswith("sqlite:///") or len(text) == len("sqlite:///"):
            fail(f"{flag} {text}: give sqlite:///relative/path.db or sqlite:////absolute/path.db")
        path = Path(text[len("sqlite:///") :]).expanduser()
    elif scheme:
        fail(
            f"{flag} {mask_url(text)}: unsupported scheme {scheme!r}; give postgresql://..., "
            "sqlite:///path.db or a SQLite file path"
        )
    else:
        path = Path(text).expanduser()
    if path.is_dir():
        fail(f"{flag} {path} is a directory; give the SQLite file the runs use")
    if not path.is_file():
        what = "checkpoint database" if flag == "--db" else "store database"
        fail(f"no {what} at {path} ({flag}); give the database the runs use")
    return f"sqlite:///{path.resolve()}", str(path)


def is_postgres(url: str) -> bool:
    """Whether `url` names a Postgres database."""
    return url.strip().lower().startswith(("postgresql://", "postgres://"))


@contextmanager
def open_dbs(
    url: str, shown: str, store: str | None = None
) -> Iterator[tuple[BaseCheckpointSaver[str], BaseStore | None, ExitStack]]:
    """The checkpointer at `url` (`shown` in errors), the `--store` store (or None), their stack."""
    with ExitStack() as stack:
        try:
            saver = stack.enter_context(open_checkpointer(url))
        except Exception as exc:  # every backend's error, reported in one line
            fail(f"cannot open the checkpoint database {shown}: {one_line(str(exc), 300)}")
        yield saver, open_memory(stack, store), stack


@contextmanager
def compiled(
    db: str, spec: str, store: str | None = None
) -> Iterator[tuple[Pregel[Any, Any, Any, Any], BaseCheckpointSaver[str]]]:
    """The `--graph` graph compiled with the `--db` checkpointer and the `--store` store."""
    url, shown = db_url(db)
    builder = load_graph(spec)
    with open_dbs(url, shown, store) as (saver, memory, _):
        yield builder.compile(checkpointer=saver, store=memory), saver


def effect_sources(stack: ExitStack, url: str, memory: BaseStore | None) -> list[Any]:
    """Where the runs' side effects are: the `--store`, and a Postgres `--db`'s lgsp_effects."""
    sources: list[Any] = [] if memory is None else [memory]
    if is_postgres(url):
        sources.append(stack.enter_context(open_effects(url, setup=False)))
    return sources


def _load_file(path: Path) -> ModuleType:
    absolute = path.resolve()
    digest = hashlib.sha1(str(absolute).encode(), usedforsecurity=False).hexdigest()[:10]
    name = f"_lgsp_graph_{re.sub(r'[^0-9A-Za-z_]', '_', absolute.stem)}_{digest}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, absolute)
    if spec is None or spec.loader is None:
        fail(f"--graph: cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    folder = str(absolute.parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its neighbours
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        fail(f"--graph: importing {path} failed: {error_line(exc)}")
    return module


def _load_module(name: str) -> ModuleType:
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)  # like `python -m`: modules of the working directory
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            fail(
                f"--graph: no module named {name!r} (from the working directory {cwd}); give "
                "package.module:ATTR or path/to/file.py:ATTR"
            )
        fail(f"--graph: importing {name} failed: {exc}")
    except Exception as exc:
        fail(f"--graph: importing {name} failed: {error_line(exc)}")


def load_graph(spec: str) -> StateGraph[Any, Any, Any, Any]:
    """The uncompiled graph `--graph` names (a StateGraph, or a function returning one)."""
    target, sep, attr = spec.strip().rpartition(":")
    if not sep or not target or not attr.strip() or "/" in attr or "\\" in attr:
        fail(f"--graph: expected path/to/file.py:ATTR or package.module:ATTR, got {spec!r}")
    attr = attr.strip()
    path = Path(target).expanduser()
    if target.endswith(".py") or os.sep in target or "/" in target:
        if not path.is_file():
            fail(f"--graph: no such file {path}")
        module = _load_file(path)
    else:
        module = _load_module(target)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            fail(f"--graph: {target} has no attribute {attr!r}{_candidates(module)}")
        obj = getattr(obj, part)
    where = f"--graph {spec}"
    if isinstance(obj, StateGraph):
        return obj
    if isinstance(obj, Pregel):
        fail(
            f"{where} is a compiled graph; name the uncompiled StateGraph (or a function "
            "returning one) so it can be compiled with the --db checkpointer"
        )
    if not _is_factory(obj):
        fail(
            f"{where} is a {type(obj).__name__}; name an uncompiled StateGraph or a function "
            "returning one"
        )
    try:
        built = obj()
    except Exception as exc:
        fail(f"{where}: calling it failed: {error_line(exc)}")
    if isinstance(built, StateGraph):
        return built
    kind = "a compiled graph" if isinstance(built, Pregel) else f"a {type(built).__name__}"
    fail(f"{where} returned {kind}; it must return an uncompiled StateGraph")


def _candidates(module: ModuleType) -> str:
    """What the module offers that `--graph` could name (graphs, then its functions)."""
    public = {n: v for n, v in vars(module).items() if not n.startswith("_")}
    graphs = sorted(n for n, v in public.items() if isinstance(v, StateGraph))
    functions = sorted(
        n
        for n, v in public.items()
        if _is_factory(v) and getattr(v, "__module__", None) == module.__name__
    )
    parts = [f"StateGraphs: {', '.join(graphs)}"] if graphs else []
    parts += [f"functions: {', '.join(functions)}"] if functions else []
    return f"; it has {'; '.join(parts)}" if parts else ""


def _is_factory(value: object) -> bool:
    return callable(value) and not isinstance(value, type | StateGraph | Pregel)


def open_memory(stack: ExitStack, store: str | None) -> BaseStore | None:
    """The `--store` store (closed with `stack`), or None when none was given."""
    if store is None:
        return None
    url, shown = db_url(store, flag="--store")
    try:
        return stack.enter_context(open_store(url))
    except Exception as exc:  # every backend's error, reported in one line
        fail(f"cannot open the store {shown}: {one_line(str(exc), 300)}")
