"""Spark Connect: the Python functions build Columns from the jar's SQL functions, so a Connect
session whose server has the jar runs them unchanged (here a local Connect server, own JVM)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pyspark
import pytest

from app_snippets import TUMBLING_STREAM, TUMBLING_STREAM_RESULT

# Slow: CI runs it on the default line and on Spark 3.5, whose Connect differs most (pytest.ini).
pytestmark = [pytest.mark.default_line, pytest.mark.connect]

ROOT = Path(__file__).resolve().parent.parent

SCRIPT = textwrap.dedent(
    """
    import json
    import os
    from pyspark.sql import SparkSession, functions as F
    from pyspark.errors import AnalysisException
    import streamwin as sw

    builder = SparkSession.builder.remote("local[2]")
    if os.environ.get("CONNECT_JAR"):  # (Spark 3.5: the server's jar, which its pyspark does not bundle)
        builder = builder.config("spark.jars", os.environ["CONNECT_JAR"])
    spark = sw.configure(builder).getOrCreate()
    df = spark.sql("SELECT 'a' AS k, timestamp_seconds(s) AS ts, s AS v FROM VALUES (1), (4), (12) AS t(s)")
    timed = df.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("s")).orderBy("window")
    counted = df.groupBy(sw.count(2, order_by="v")).agg(F.sum("v").alias("s")).orderBy("window")
    split = df.groupBy(sw.split(F.col("v") > 3, order_by="v")).agg(F.sum("v").alias("s")).orderBy("window")
    try:
        df.groupBy(sw.count(0, order_by="v")).count().collect()
        error = None
    except AnalysisException as e:
        error = str(e).splitlines()[0]
    import os
    # The same window on a stream, through the server's state store.
    # <tumbling stream>
    print("RESULT " + json.dumps({
        "streamed": [(r.window.start.second, r.window.kind, r.s) for r in streamed],
        "connect": type(spark).__module__,
        "timed": [(r.window.start.second, r.window.kind, r.s) for r in timed.collect()],
        "counted": [(r.window.start, r.window.end, r.window.kind, r.s) for r in counted.collect()],
        "split": [(r.window.kind, r.s) for r in split.collect()],
        "error": error,
    }), flush=True)
    # The results are in. pyspark 3.5's local Connect server sometimes never returns from its
    # shutdown (CI, 2026-11-29: RESULT printed, then 10 minutes without exit), so a stop that
    # hangs ends the process; the server itself may outlive it, so the test ends it (run_to_exit).
    import threading
    threading.Timer(120, lambda: os._exit(0)).start()
    spark.stop()
    os._exit(0)
    """
).replace("# <tumbling stream>\n", TUMBLING_STREAM)


def run_to_exit(args: list[str], env: dict[str, str], cwd: Path, timeout: float) -> tuple[int, str, str]:
    """Runs the script until it exits, then ends what it left behind.

    The local Connect server is a child JVM that inherits the script's stdout and stderr; when its
    shutdown hangs (pyspark 3.5, CI 2026-12-02: the script exited 0, the server kept the pipes open
    for 10 minutes), waiting for the pipes to close never ends. So output goes to files, the wait is
    for the script's own exit, and its process group is killed after it."""
    out, err = cwd / "script.out", cwd / "script.err"
    with open(out, "w") as stdout, open(err, "w") as stderr:
        proc = subprocess.Popen(args, stdout=stdout, stderr=stderr, env=env, cwd=cwd, start_new_session=True)
        try:
            returncode = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            returncode = None
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
    assert returncode is not None, f"the script ran past {timeout} s:\n{out.read_text()[-3000:]}\n{err.read_text()[-6000:]}"
    return returncode, out.read_text(), err.read_text()


def test_windows_under_spark_connect(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    jar = subprocess.run([str(ROOT / "bin" / "connect-jar"), pyspark.__version__], capture_output=True, text=True,
                         timeout=600)
    assert jar.returncode == 0, jar.stderr[-3000:]
    if jar.stdout.strip():
        env["CONNECT_JAR"] = jar.stdout.strip()
    returncode, stdout, stderr = run_to_exit([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, timeout=600)
    lines = [l for l in stdout.splitlines() if l.startswith("RESULT ")]
    assert returncode == 0 and lines, f"{stdout[-3000:]}\n{stderr[-6000:]}"
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["connect"].startswith("pyspark.sql.connect")
    assert result["timed"] == [[0, "final", 5], [10, "final", 12]]
    assert result["counted"] == [[1, 4, "final", 5], [12, 12, "partial", 12]]
    assert result["split"] == [["final", 1], ["final", 4], ["partial", 12]]  # 4 and 12 each start a window
    assert result["streamed"] == TUMBLING_STREAM_RESULT
    assert result["error"] == "sw_count: argument `size` must be a positive whole number of rows, got 0"
