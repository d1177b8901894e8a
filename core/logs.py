"""Logging for the whole program: one rotating file under the data directory (logs/ecolens.log) at the
`log_level` setting, and warnings on stderr for the web server. Library modules only call
logging.getLogger(__name__); this is the one place that decides where the lines go."""
from __future__ import annotations

import logging
import logging.handlers
import sys
from pathlib import Path

from core.contracts.errors import ConfigError
from core.redact import MaskUrlsFilter

FORMAT = "%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"
LOG_FILE = "logs/ecolens.log"
_MARK = "_ecolens_handler"


class LogFile(logging.handlers.RotatingFileHandler):
    """The rotating log file, kept going when it cannot be written (a full disk, a removed folder): the
    first failure is reported once on stderr with its cause, the lines are dropped meanwhile (never a
    traceback, never an error in the program that logged), and once writing works again the file gets one
    line saying how many were lost and why. (logging calls emit under the handler's own lock: one at a time.)"""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.lost = 0  # lines dropped in the current failure
        self.cause = ""  # why; '' while writing works

    def emit(self, record: logging.LogRecord) -> None:
        if self.cause:  # the last line failed: say how many were lost first, if the file takes it now
            lost = self.lost
            note = logging.LogRecord(__name__, logging.WARNING, __file__, 0, "%d log line(s) were lost while the "
                                     "log file could not be written (%s)", (lost, self.cause), None)
            super().emit(note)  # a failure lands in handleError: still failing
            if self.lost > lost:
                self.lost = lost + 1  # the note itself is no lost line; this record is
                return
            self.lost, self.cause = 0, ""
        super().emit(record)

    def handleError(self, record: logging.LogRecord) -> None:
        exc = sys.exc_info()[1]
        first = not self.cause
        self.lost += 1
        self.cause = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__) if exc else "unknown"
        if first:
            try:
                sys.stderr.write(f"EcoLens: the log file {self.baseFilename} cannot be written ({self.cause}); log "
                                 "lines are dropped until it can (free some disk space)\n")
                sys.stderr.flush()
            except Exception:  # nowhere left to say it: carry on
                pass


def configure_logging(data_dir: Path, level: str = "INFO", console: bool = False, name: str = "") -> Path:
    """Send log lines to data_dir/logs/ecolens.log (5 MB x 3 files); with `console`, warnings also to stderr.
    `name`: another file in the same folder, logs/NAME.log (a worker process: one rotating file per process).
    Safe to call again (earlier EcoLens handlers are replaced). Returns the log file's path."""
    path = Path(data_dir) / (f"logs/{name}.log" if name else LOG_FILE)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler = LogFile(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"The data directory {data_dir} cannot hold the log file: {exc.strerror or exc}",
                          "set data_dir (ECOLENS_DATA_DIR) to a folder you can write to") from None
    logging.raiseExceptions = False  # a log line that cannot be written (a full disk) never becomes a traceback
    # (and the log file itself reports it once: LogFile)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, _MARK, False)]:
        root.removeHandler(handler)
        handler.close()
    file_handler.setFormatter(logging.Formatter(FORMAT))
    handlers: list[logging.Handler] = [file_handler]
    if console:
        stream = logging.StreamHandler()
        stream.setLevel(logging.WARNING)
        stream.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        handlers.append(stream)
    for handler in handlers:
        handler.addFilter(MaskUrlsFilter())  # credentials inside URLs never reach a log line
        setattr(handler, _MARK, True)
        root.addHandler(handler)
    numeric = logging.getLevelName(level.upper())
    root.setLevel(numeric if isinstance(numeric, int) else logging.INFO)
    for noisy in ("httpx", "httpcore", "urllib3", "matplotlib", "PIL", "asyncio", "multipart", "filelock"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    return path
