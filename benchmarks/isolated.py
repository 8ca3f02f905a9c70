"""Runs a benchmark case in a process of its own, so that an out-of-memory error or a hang ends only that case."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def save_results(name: str, results: list[dict]) -> None:
    """Writes a benchmark's rows to ``benchmarks/results/<name>.json`` (not committed)."""
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(results, indent=2))


def run_case(cmd: list[str], env: dict[str, str], timeout: int) -> dict:
    """Runs ``cmd``, whose last ``RESULT <json>`` line on stdout is the case's result. Returns that result with
    ``outcome`` "ok", or only ``outcome``: "OOM" (the JVM ran out of heap), "failed: <last error line>" or
    "timeout after <timeout> s"."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return {"outcome": f"timeout after {timeout} s"}
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    if proc.returncode == 0 and lines:
        return {"outcome": "ok", **json.loads(lines[-1][len("RESULT "):])}
    if "OutOfMemoryError" in proc.stdout + proc.stderr:
        return {"outcome": "OOM"}
    return {"outcome": "failed: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:120]}
