"""``gatebot run --workers N``: N server processes sharing one port (SO_REUSEPORT, so the kernel
spreads connections over them), forked and supervised by this one. The parent forwards SIGTERM
and SIGINT to every worker; when one worker exits the others are stopped too, and the parent exits
with the first non-zero status (0 when all stopped cleanly)."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable

import click


def supervise(workers: int, serve: Callable[[], None]) -> int:
    """Fork ``workers`` children that each run ``serve()``; wait for them. Returns the status."""
    children: list[int] = []
    stopping = False

    def forward(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True
        for pid in children:
            _signal(pid, signal.SIGTERM if signum == signal.SIGTERM else signal.SIGINT)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for _ in range(workers):
            pid = os.fork()
            if pid == 0:  # the worker: its own signal handling, then serve until stopped
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
                os._exit(_run_child(serve))
            children.append(pid)
        click.echo(f"gatebot: {workers} workers (pids {', '.join(map(str, children))})", err=True)
        return _wait(children, lambda: stopping)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run_child(serve: Callable[[], None]) -> int:
    try:
        serve()
        return 0
    except KeyboardInterrupt:
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # reported here: the parent only sees the status
        click.echo(f"gatebot worker {os.getpid()} failed: {exc}", err=True)
        return 1


def _wait(children: list[int], stopping: Callable[[], bool]) -> int:
    status = 0
    alive = set(children)
    while alive:
        try:
            pid, raw = os.wait()
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        alive.discard(pid)
        code = os.waitstatus_to_exitcode(raw)
        if code != 0 and not stopping():
            click.echo(f"gatebot worker {pid} exited with status {code}: stopping", err=True)
        status = status or (1 if code < 0 and not stopping() else max(code, 0))
        for other in alive:  # one worker gone: the rest follow, so a supervisor sees it
            _signal(other, signal.SIGTERM)
    return status


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
