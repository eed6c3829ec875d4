"""Start uvicorn with the settings the harness measures (see README.md).

WORKERS=1 runs one event loop in this process; WORKERS=N>1 makes uvicorn's
supervisor bind the socket once and spawn N worker processes, each with its
own uvloop loop, sharing the listening socket.
"""

from __future__ import annotations

import os
import platform
import sys

import uvicorn

from app import SERVER_NAME

WORKERS_MAX = 64
LISTEN_BACKLOG = 4096


def workers() -> int:
    raw = os.environ.get("WORKERS") or "1"
    if not raw.isdigit() or not 1 <= int(raw) <= WORKERS_MAX:
        sys.exit(f"{SERVER_NAME}: WORKERS must be an integer from 1 to {WORKERS_MAX}, not {raw!r}")
    return int(raw)


def main() -> None:
    host = os.environ.get("HOST") or "0.0.0.0"
    port = int(os.environ.get("PORT") or "8080")
    count = workers()
    print(
        f"{SERVER_NAME} python {platform.python_version()} uvicorn {uvicorn.__version__} "
        f"listening on {host}:{port} (WORKERS={count})",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        "app:app",
        host=host,
        port=port,
        workers=count,
        loop="uvloop",
        http="httptools",
        ws="none",
        lifespan="off",
        interface="asgi3",
        access_log=False,
        log_level="warning",
        # Our own Server header, on every response uvicorn writes (its own
        # 400s for malformed HTTP included); uvicorn's is off. Date is set by
        # the app when it answers (app.http_date explains why), so uvicorn's
        # is off too; its bare 400s for malformed HTTP go without one.
        server_header=False,
        date_header=False,
        headers=[("Server", SERVER_NAME)],
        # No X-Forwarded-* rewriting: it would wrap every request in a
        # middleware, and nothing sits in front of this server.
        proxy_headers=False,
        timeout_keep_alive=120,
        # The listen queue every server in servers/ asks for (CONTRACT.md);
        # uvicorn's default is 2,048.
        backlog=LISTEN_BACKLOG,
    )


if __name__ == "__main__":
    main()
