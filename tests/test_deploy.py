"""The jar alone is enough: spark-submit --jars, and executors in separate JVMs (local-cluster)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import streamwin as sw
from streamwin._jar import SCALA_VERSIONS, SUPPORTED_SPARK_LINES, _installed_scala_version, jar_name, spark_line

# Slow: CI runs it on the default line only (pytest.ini).
pytestmark = pytest.mark.default_line

ROOT = Path(__file__).resolve().parent.parent
SPARK_SUBMIT = Path(sys.executable).parent / "spark-submit"

APP = textwrap.dedent(
    """
    import json, sys
    from pyspark.sql import SparkSession, functions as F
    import streamwin as sw

    # No streamwin.configure(...) and no spark.sql.extensions: the jar registers itself.
    spark = SparkSession.builder.appName("streamwin-deploy-check").getOrCreate()
    sc = spark.sparkContext
    df = spark.range(0, 3000, numPartitions=6).select(
        (F.col("id") % 7).alias("k"), F.timestamp_seconds("id").alias("ts"), F.col("id").alias("v"))
    tumbling = df.groupBy("k", sw.tumbling("ts", "100 seconds")).agg(F.sum("v").alias("s"))
    counted = df.groupBy("k", sw.count(10, step=5, order_by="v")).agg(F.max("v").alias("m"))
    sql = spark.sql("SELECT count(*) AS n FROM (SELECT sw_count(3, 'order_by', id) AS w FROM range(10))")
    result = {
        "executors": len(sc._jsc.sc().statusTracker().getExecutorInfos()) - 1,
        "tumbling_windows": tumbling.count(),
        "tumbling_total": tumbling.agg(F.sum("s")).first()[0],
        "count_windows": counted.count(),
        "tagged_rows": sql.first().n,
    }
    print("RESULT " + json.dumps(result))
    spark.stop()
    """
)


def _extension_conf() -> list[str]:
    """PySpark 3.5 does not look session extensions up on the classpath: name streamwin's (4.x: not needed)."""
    import pyspark

    return ["--conf", "spark.sql.extensions=streamwin.StreamwinExtensions"] if spark_line(pyspark.__version__) == "3.5" \
        else []


def run_app(tmp_path: Path, master: str, extra: list[str]) -> dict:
    app = tmp_path / "app.py"
    app.write_text(APP)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cmd = [str(SPARK_SUBMIT), "--master", master, "--jars", sw.jar_path(), "--conf", "spark.ui.enabled=false",
           *_extension_conf(), *extra, str(app)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"spark-submit failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    return json.loads(lines[-1][len("RESULT "):])


EXPECTED = {
    # 3000 one-second rows over 7 keys: every key has a row in each of the 30 windows of 100 s.
    "tumbling_windows": 7 * 30,
    "tumbling_total": sum(range(3000)),
    # Each key holds 428 or 429 rows; windows start every 5 rows: ceil(n / 5) windows per key.
    "count_windows": sum(-(-len(range(k, 3000, 7)) // 5) for k in range(7)),
    # 10 rows, windows of 3: every row is tagged once.
    "tagged_rows": 10,
}


def test_spark_submit_with_jars_only(tmp_path):
    result = run_app(tmp_path, "local[2]", [])
    assert {k: result[k] for k in EXPECTED} == EXPECTED


def test_local_cluster_executors_load_the_jar(tmp_path):
    # Two executors, each a separate JVM with one core and 1 GiB: the jar reaches them through --jars.
    result = run_app(tmp_path, "local-cluster[2,1,1024]", ["--conf", "spark.executor.memory=1g"])
    assert result["executors"] == 2
    assert {k: result[k] for k in EXPECTED} == EXPECTED


CONFIGURE_APP = textwrap.dedent(
    """
    from pyspark.sql import SparkSession
    import streamwin as sw

    spark = sw.configure(SparkSession.builder.appName("streamwin-configure-keeps-jars")).getOrCreate()
    print("JARS " + spark.conf.get("spark.jars"))
    spark.stop()
    """
)


def test_configure_under_spark_submit_keeps_the_submitted_jars(tmp_path):
    # spark-submit --jars other.jar: sw.configure adds streamwin's jar to the submitted ones, never
    # replaces them (a Kafka connector given to spark-submit must still reach the executors).
    other = tmp_path / "other.jar"
    with zipfile.ZipFile(other, "w") as jar:
        jar.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\n")
    app = tmp_path / "configure_app.py"
    app.write_text(CONFIGURE_APP)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cmd = [str(SPARK_SUBMIT), "--master", "local[1]", "--jars", str(other), "--conf", "spark.ui.enabled=false", str(app)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("JARS ")]
    assert proc.returncode == 0 and lines, f"spark-submit failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    jars = lines[-1][len("JARS "):].split(",")
    assert any(j.endswith("other.jar") for j in jars), jars
    assert any(j.endswith(Path(sw.jar_path()).name) for j in jars), jars


def test_jar_path_is_bundled_in_the_package():
    import pyspark

    assert Path(sw.jar_path()).is_file()
    assert Path(sw.jar_path()).name == jar_name(spark_line(pyspark.__version__), _installed_scala_version())
    assert Path(sw.jar_path()).parent == Path(sw.__file__).parent / "jars"


MISMATCH_APP = textwrap.dedent(
    """
    from pyspark.sql import SparkSession
    spark = SparkSession.builder.appName("streamwin-wrong-line").getOrCreate()
    spark.sql("SELECT sw_count(3, 'order_by', id) AS w FROM range(10)").collect()
    """
)


def test_a_jar_of_another_spark_line_fails_when_the_extension_registers(tmp_path):
    import pyspark

    running = spark_line(pyspark.__version__)
    scala = _installed_scala_version()
    # Another line's jar for the running Scala version, and a jar of the other Scala version: both refused
    # when the extension registers, with a message naming the jar to use (the check runs on either Scala).
    # (Spark 3.5 on Scala 2.12 has no other line of its Scala version.)
    other_line = next((line for line in SUPPORTED_SPARK_LINES if line != running and scala in SCALA_VERSIONS[line]), None)
    other_scala = next(s for line in SUPPORTED_SPARK_LINES for s in SCALA_VERSIONS[line] if s != scala)
    other_scala_line = next(line for line in SUPPORTED_SPARK_LINES if other_scala in SCALA_VERSIONS[line])
    app = tmp_path / "app.py"
    app.write_text(MISMATCH_APP)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cases = [(other_line, scala)] * (other_line is not None) + [(other_scala_line, other_scala)]
    for line, jar_scala in cases:
        cmd = [str(SPARK_SUBMIT), "--master", "local[1]", "--jars", sw.jar_path(f"{line}.0", jar_scala), *_extension_conf(),
               "--conf", "spark.ui.enabled=false", str(app)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
        output = proc.stdout + proc.stderr
        assert proc.returncode != 0
        assert (f"streamwin: this jar (streamwin-spark{line}_{jar_scala}.jar, streamwin {sw.__version__}) is built for "
                f"Spark {line} on Scala {jar_scala}, but Spark {pyspark.__version__} on Scala {scala} is running: use "
                f"streamwin-spark{running}_{scala}.jar instead (in Python, streamwin.configure(builder) picks it)") in output, \
            output[-3000:]
        assert "NoClassDefFoundError" not in output and "NoSuchMethodError" not in output
