"""`python -m collmc.launch WORLD PROGRAM.py ARGS...`: starts WORLD ranks of a torch program on this host, as
torchrun does (Debian's torchrun fails on Python 3.11).

Each rank gets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR=127.0.0.1 and a free MASTER_PORT; the launcher waits
for all of them and exits with the first nonzero status (a signal N: 128 + N)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def main() -> int:
    world = int(sys.argv[1])
    program = sys.argv[2:]
    port = os.environ.get("MASTER_PORT") or str(free_port())
    procs = []
    for r in range(world):
        env = dict(os.environ, RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, *program], env=env))

    def stop(sig: int, _frame: object) -> None:
        for p in procs:
            if p.poll() is None:
                p.send_signal(sig)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    status = 0
    for p in procs:
        rc = p.wait()
        rc = 128 - rc if rc < 0 else rc
        status = status or rc
    return status


if __name__ == "__main__":
    sys.exit(main())
