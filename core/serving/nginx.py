"""nginx as EcoLens's reverse proxy (`python app.py serve --processes N`): finding it, and its configuration,
written into the data directory from the project's template (nginx.conf.template beside this module) with
the ports of the web processes, the address to listen on and the upload limit. nginx runs unprivileged in the
foreground, its pid, log and temporary files in data_dir/serve."""
from __future__ import annotations

import math
import shutil
from pathlib import Path

from core.contracts.errors import InputError

TEMPLATE = Path(__file__).with_name("nginx.conf.template")
INSTALL = "apt-get install nginx"


def find_nginx(path: str | None = None) -> str:
    """The nginx program on PATH (`path`: a PATH to search instead); InputError saying how to install it."""
    found = shutil.which("nginx", path=path)
    if found is None:
        raise InputError("serving several processes needs nginx, and there is no nginx on PATH",
                         f"install it ({INSTALL}, or bash scripts/setup.sh --nginx), make sure its folder "
                         "(/usr/sbin on Debian) is on PATH, or serve one process (--processes 1)")
    return found


def listen_address(host: str, port: int) -> str:
    """nginx's `listen` value for host and port (an IPv6 address in brackets)."""
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def render(run_dir: Path, host: str, port: int, ports: list[int], max_upload_mb: float,
           template: Path = TEMPLATE) -> str:
    """The configuration text for web processes on 127.0.0.1:`ports`."""
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=3 fail_timeout=5s;" for p in ports)
    text = template.read_text(encoding="utf-8")
    for name, value in (("RUN", str(run_dir)), ("SERVERS", servers), ("LISTEN", listen_address(host, port)),
                        ("MAX_BODY", str(math.ceil(max_upload_mb) + 1))):
        text = text.replace(f"@{name}@", value)
    return text


def write_config(run_dir: Path, host: str, port: int, ports: list[int], max_upload_mb: float) -> Path:
    """Write data_dir/serve/nginx.conf (and the folders nginx writes to); returns its path."""
    for sub in ("tmp/body", "tmp/proxy", "tmp/fastcgi", "tmp/uwsgi", "tmp/scgi"):
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    conf = run_dir / "nginx.conf"
    conf.write_text(render(run_dir, host, port, ports, max_upload_mb), encoding="utf-8")
    return conf
