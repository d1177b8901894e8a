"""Opening the SQLite database: WAL mode, foreign keys, a busy timeout, and Alembic migrations to head."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.pool import NullPool

from core.contracts.bounds import name_key

MIGRATIONS = Path(__file__).with_name("migrations")
NAME_KEY_SQL = "ecolens_name_key"  # the SQL function of core.contracts.bounds.name_key on every connection
MMAP_BYTES = 1 << 30  # the first GiB of the database file is read through a memory map (address space, not RAM)
CHUNK = 500  # SQLite caps bound parameters; a long list of ids is queried in chunks of this many


def chunks(items: Sequence, size: int = CHUNK) -> Iterator[Sequence]:
    """`items` in slices of at most `size`, for IN (...) lists SQLite will bind."""
    for i in range(0, len(items), size):
        yield items[i:i + size]


def _name_key(value):
    return None if value is None else name_key(value)


def open_engine(db_path: Path | str, mmap_bytes: int = MMAP_BYTES) -> Engine:
    """An engine on `db_path` (created if new) with the schema migrated to the newest version; `mmap_bytes`
    of the file are read through a memory map (0: none, every read goes through SQLite's page cache)."""
    db_path = Path(db_path)
    db_path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{db_path}", connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn, _record):  # why: WAL lets readers run while the one writer writes
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA synchronous=NORMAL")
        # why: a month or place filter at a million photos reads 100k+ index entries; through the
        # 2 MB page cache each read copied pages from the OS again (about half of the query's time), mapped
        # they are read in place, shared by every connection and process (the OS's cache, not ours)
        # (the sqlite_mmap_mb setting turns it off where a read error must not end the process: a network disk)
        cur.execute(f"PRAGMA mmap_size={int(mmap_bytes)}")
        cur.close()
        # why: SQLite's lower() folds ASCII only, so a taxon filter typed with non-ASCII letters ("Renée",
        # "Ä") compares through this (NFC + case fold, core.contracts.bounds.name_key); never used in an index or a
        # trigger, so a connection without it (the sqlite3 shell) still reads and writes the database
        dbapi_conn.create_function(NAME_KEY_SQL, 1, _name_key, deterministic=True)

    migrate(engine)
    return engine


def migrate(engine: Engine) -> None:
    """Upgrade the schema to Alembic's head revision. A lock file beside the database serialises this, so two
    processes opening a new data directory at once (the web app and an ingest) do not both create tables."""
    import fcntl

    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    lock_path = Path(str(engine.url.database) + ".migrate.lock")
    # why a connection of its own: pysqlite runs DDL outside any transaction, so a migration that fails half
    # way (a full disk) would leave tables without their version stamp and every later start would fail on
    # "table already exists"; here the driver's own handling is off and every upgrade is one BEGIN ... COMMIT
    ddl = create_engine(engine.url, connect_args={"timeout": 30}, poolclass=NullPool)

    @event.listens_for(ddl, "connect")
    def _manual(dbapi_conn, _record):
        dbapi_conn.isolation_level = None

    @event.listens_for(ddl, "begin")
    def _begin(conn):
        conn.exec_driver_sql("BEGIN")  # deferred: a database already at head is only read (it may be locked)

    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            with ddl.begin() as conn:
                cfg.attributes["connection"] = conn
                command.upgrade(cfg, "head")
        finally:
            ddl.dispose()
            fcntl.flock(lock, fcntl.LOCK_UN)
