"""Session logs that live in core: memory_log.py (in memory, for tests and throwaway runs). The one on SQLite is
storage/sessionlog.py."""
