"""CPU seconds of processes: this process's own, and others' read from /proc (for bench/load.py, the share of the
CPU that a server, its workers and the clients each used; for bench/scale.py, the CPU time of each build)."""
from __future__ import annotations

import os
import resource
from pathlib import Path


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process so far (all its threads), from /proc; 0 when it has ended."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def own_cpu_seconds() -> float:
    """CPU time of this process so far, every thread (user + system): less sensitive than the wall clock to what
    else the machine runs, so that two builds compare on a shared machine too (bench/scale.py)."""
    use = resource.getrusage(resource.RUSAGE_SELF)
    return use.ru_utime + use.ru_stime


def descendants(pid: int) -> list[int]:
    """The processes started by `pid`, and theirs (the server's model workers), from /proc."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


class CpuShare:
    """CPU seconds used while the sessions run: by this bench's own clients (this process, all its threads), by
    the web server and by its worker processes (summed as they are seen: a worker that ends between two
    samples loses what it used since the last one). Without a server process (--url): the clients only."""

    def __init__(self, server_pid: int | None):
        self.server_pid = server_pid
        self.clients0 = own_cpu_seconds()
        self.server0 = cpu_seconds(server_pid) if server_pid else 0.0
        self.first: dict[int, float] = {}
        self.last: dict[int, float] = {}
        self.sample()

    def sample(self) -> None:
        for pid in descendants(self.server_pid) if self.server_pid else []:
            used = cpu_seconds(pid)
            self.first.setdefault(pid, used)
            self.last[pid] = max(used, self.last.get(pid, 0.0))

    def finish(self) -> dict[str, float | None]:
        self.sample()
        clients = own_cpu_seconds() - self.clients0
        if not self.server_pid:
            return {"clients": clients, "server": None, "workers": None}
        return {"clients": clients, "server": cpu_seconds(self.server_pid) - self.server0,
                "workers": sum(self.last[p] - self.first[p] for p in self.last)}
