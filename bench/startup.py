"""Start-up time of ``gatebot run`` on the sample pack: to a healthy /healthz, to the first reply.

- cold: the first start on an empty data directory (the database created and migrated, the
  pack's passages embedded and stored);
- warm: a restart on the same data directory (vectors read back from the store).

Each start is a fresh process on a free loopback port (offline provider, heads and hybrid
search on, the defaults). Healthy is the first 200 from /healthz; the first reply is a new
conversation and one question answered through the REST API after that. Wall-clock seconds from
the process's launch, and the server process's CPU seconds by then (which, unlike wall time, do not
grow when other work shares the machine), the median of ``--runs`` starts of each kind.

    python bench/startup.py [--runs 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUESTION = "how much does it cost?"
#: A start that is not healthy by then is reported as failed (bounded wait, never a hang).
LIMIT_S = 120.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def request(url: str, body: dict[str, object] | None = None, token: str = "") -> dict[str, object]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method="POST" if body is not None else "GET")
    req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=60) as resp:
        return dict(json.loads(resp.read()))


def wait_healthy(base: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + LIMIT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"gatebot run exited with {proc.returncode}")
        try:
            request(f"{base}/healthz")
            return
        except (urllib.error.URLError, ConnectionError, OSError):
            time.sleep(0.05)
    raise RuntimeError(f"not healthy after {LIMIT_S:.0f}s")


def cpu_seconds(pid: int) -> float:
    """User + system CPU the process has used (Linux /proc): unlike wall time, it does not grow
    when other work shares the machine."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def one_start(data: Path, log: Path) -> dict[str, float]:
    """Launch, time healthy and the first reply, stop. Seconds since launch."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "GATEBOT_DATA_DIR": str(data),
        "GATEBOT_PORT": str(port),
        "GATEBOT_HOST": "127.0.0.1",
        "GATEBOT_PACK": str(ROOT / "knowledge" / "acme"),
        "GATEBOT_CHANNELS": "web",
    }
    exe = Path(sys.executable).parent / "gatebot"
    started = time.perf_counter()
    with log.open("ab") as out:
        proc = subprocess.Popen([str(exe), "run"], cwd=ROOT, env=env, stdout=out, stderr=out)
    try:
        wait_healthy(base, proc)
        healthy = time.perf_counter() - started
        healthy_cpu = cpu_seconds(proc.pid)
        conv = request(f"{base}/api/conversations", {})
        reply = request(
            f"{base}/api/conversations/{conv['id']}/messages",
            {"text": QUESTION, "client_message_id": "bench-1"},
            str(conv["token"]),
        )
        if not reply.get("replies"):
            raise RuntimeError(f"no reply: {reply}")
        return {
            "healthy_s": healthy,
            "first_reply_s": time.perf_counter() - started,
            "healthy_cpu_s": healthy_cpu,
            "first_reply_cpu_s": cpu_seconds(proc.pid),
        }
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def median(rows: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="gatebot-startup-"))
    cold: list[dict[str, float]] = []
    warm: list[dict[str, float]] = []
    try:
        for n in range(args.runs):
            data = work / f"data{n}"
            cold.append(one_start(data, work / "server.log"))
            warm.append(one_start(data, work / "server.log"))
    except RuntimeError as exc:
        print(f"failed: {exc}; log in {work / 'server.log'}", file=sys.stderr)
        raise SystemExit(1) from exc
    keys = ("healthy_s", "first_reply_s", "healthy_cpu_s", "first_reply_cpu_s")
    result = {
        "runs": args.runs,
        "encoder": os.environ.get("GATEBOT_ENCODER", "numpy"),
        "load_average_1m": round(os.getloadavg()[0], 1),
        "cold": {key: median(cold, key) for key in keys},
        "warm": {key: median(warm, key) for key in keys},
    }
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(result, indent=None if not args.json else 1))


if __name__ == "__main__":
    main()
