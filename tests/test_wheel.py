"""The wheel (bin/wheel): one file bundling a jar per supported Spark line, installed with pip next to
the user's own pyspark; streamwin picks the jar of the installed Spark line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pyspark
import pytest

import streamwin as sw
from app_snippets import TUMBLING_STREAM, TUMBLING_STREAM_RESULT
from streamwin import _jar

ROOT = Path(__file__).resolve().parent.parent


def _wheel() -> Path:
    wheels = sorted((ROOT / "dist").glob("streamwin-*.whl"))
    if len(wheels) != 1:
        pytest.fail(f"expected one wheel in dist/, found {[w.name for w in wheels]}: build it with bin/wheel")
    return wheels[0]


def _manifest(jar_bytes: bytes) -> dict[str, str]:
    import io

    with zipfile.ZipFile(io.BytesIO(jar_bytes)) as jar:
        lines = jar.read("META-INF/MANIFEST.MF").decode().splitlines()
    return dict(line.split(": ", 1) for line in lines if ": " in line)


def test_wheel_bundles_one_jar_per_supported_spark_line_and_scala_version():
    builds = [(line, scala) for line in _jar.SUPPORTED_SPARK_LINES for scala in _jar.SCALA_VERSIONS[line]]
    assert ("3.5", "2.12") in builds and ("3.5", "2.13") in builds and ("4.3", "2.13") in builds
    with zipfile.ZipFile(_wheel()) as wheel:
        jars = sorted(n for n in wheel.namelist() if n.endswith(".jar"))
        assert jars == sorted(f"streamwin/jars/{_jar.jar_name(line, scala)}" for line, scala in builds)
        for line, scala in builds:
            manifest = _manifest(wheel.read(f"streamwin/jars/{_jar.jar_name(line, scala)}"))
            assert manifest["Spark-Line"] == line
            assert _jar.spark_line(manifest["Spark-Version"]) == line
            assert manifest["Scala-Binary-Version"] == scala
        metadata = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        requires = [l for l in wheel.read(metadata).decode().splitlines() if l.startswith("Requires-Dist:")]
        # Any supported line, never a pin: the user's own pyspark stays. matplotlib only with the plot extra.
        assert [r for r in requires if "extra ==" not in r] == ["Requires-Dist: pyspark<4.4,>=3.5"]
        assert [r for r in requires if "extra ==" in r] == ['Requires-Dist: matplotlib>=3.7; extra == "plot"']


def test_jar_path_picks_the_jar_of_each_supported_line_and_scala_version():
    for version, line, scala in [("3.5.9", "3.5", "2.12"), ("4.0.5", "4.0", "2.13"), ("4.1.0", "4.1", "2.13"),
                                 ("4.2.1", "4.2", "2.13"), ("4.3.0", "4.3", "2.13")]:
        assert Path(sw.jar_path(version)).name == f"streamwin-spark{line}_{scala}.jar"
    assert Path(sw.jar_path("3.5.7", "2.13")).name == "streamwin-spark3.5_2.13.jar"
    # The installed pyspark's jars say which Scala it runs.
    scala = _jar._installed_scala_version()
    assert scala in _jar.SCALA_VERSIONS[_jar.spark_line(pyspark.__version__)]
    assert Path(sw.jar_path()).name == _jar.jar_name(_jar.spark_line(pyspark.__version__), scala)


def test_the_scala_version_of_the_installed_spark_chooses_the_jar(monkeypatch):
    monkeypatch.setattr(_jar, "_installed_spark_version", lambda: "3.5.9")
    for scala in ("2.12", "2.13"):
        monkeypatch.setattr(_jar, "_installed_scala_version", lambda: scala)
        assert Path(sw.jar_path()).name == f"streamwin-spark3.5_{scala}.jar"
    monkeypatch.setattr(_jar, "_installed_spark_version", lambda: "4.1.0")
    monkeypatch.setattr(_jar, "_installed_scala_version", lambda: "2.12")
    with pytest.raises(_jar.UnsupportedSparkVersionError) as error:
        sw.jar_path()
    assert str(error.value) == (
        "streamwin has no jar for Spark 4.1.0 built with Scala 2.12: Spark 4.1 jars are built for Scala 2.13. "
        "Run a Spark distribution built with one of those."
    )


@pytest.mark.parametrize("version", ["3.4.1", "4.4.0", "5.0.0"])
def test_configure_rejects_an_unsupported_spark(monkeypatch, version):
    from pyspark.sql import SparkSession

    monkeypatch.setattr(_jar, "_installed_spark_version", lambda: version)
    with pytest.raises(_jar.UnsupportedSparkVersionError) as error:
        sw.configure(SparkSession.builder)
    assert str(error.value) == (
        f"streamwin does not support Spark {version} (the installed pyspark): it supports Spark "
        "3.5.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x. Install one of those, e.g. pip install 'pyspark>=3.5,<4.4'."
    )


def test_configure_selects_rocksdb_with_changelog_checkpointing_unless_the_builder_sets_them():
    rocksdb = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
    changelog = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
    provider = "spark.sql.streaming.stateStore.providerClass"

    class Builder:
        """What configure reads and calls of a SparkSession builder (pyspark 3.5's builders share their options)."""

        def __init__(self) -> None:
            self._options: dict = {}

        def config(self, key: str, value: str) -> "Builder":
            self._options[key] = value
            return self

    def options(builder: Builder) -> dict:
        return sw.configure(builder)._options  # type: ignore[arg-type]

    chosen = options(Builder())
    assert chosen[provider] == rocksdb and chosen[changelog] == "true"
    kept = options(Builder().config(changelog, "false"))
    assert kept[provider] == rocksdb and kept[changelog] == "false"
    default_provider = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
    own = options(Builder().config(provider, default_provider))
    assert own[provider] == default_provider and changelog not in own


SCRIPT = textwrap.dedent(
    """
    import json, os
    from pyspark.sql import SparkSession, functions as F
    import streamwin as sw

    spark = (sw.configure(SparkSession.builder.master("local[2]"))
             .config("spark.sql.session.timeZone", "UTC").config("spark.ui.enabled", "false").getOrCreate())
    df = spark.sql("SELECT 'a' AS k, timestamp_seconds(s) AS ts, s AS v FROM VALUES (1), (4), (12), (25) AS t(s)")
    batch = df.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("s")).orderBy("window").collect()
    df.createOrReplaceTempView("readings")
    sql = spark.sql("SELECT sw_count(2, order_by => v) AS w, sum(v) AS s FROM readings "
                    "GROUP BY sw_count(2, order_by => v) ORDER BY w").collect()
    # <tumbling stream>
    print("RESULT " + json.dumps({
        "module": sw.__file__,
        "jar": sw.jar_path(),
        "spark": spark.version,
        "batch": [(r.window.start.second, r.window.kind, r.s) for r in batch],
        "sql": [(r.w.start, r.w.end, r.w.kind, r.s) for r in sql],
        "streamed": [(r.window.start.second, r.window.kind, r.s) for r in streamed],
    }))
    spark.stop()
    """
).replace("# <tumbling stream>\n", TUMBLING_STREAM)


@pytest.mark.default_line  # (CI's wheel runs on other lines are such a fresh environment themselves)
def test_wheel_in_a_fresh_environment_with_only_pyspark(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    pip = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # The same pyspark as the tests run (pip's cache has it); then the wheel, with its dependencies resolved.
    subprocess.run(pip + [f"pyspark=={pyspark.__version__}"], check=True, timeout=1200)
    subprocess.run(pip + [str(_wheel())], check=True, timeout=600)
    work = tmp_path / "work"
    work.mkdir()
    (work / "app.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "STREAMWIN_JAR", "SPARK_HOME")}
    env.update(PYSPARK_PYTHON=str(python), PYSPARK_DRIVER_PYTHON=str(python))
    proc = subprocess.run([str(python), "app.py"], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
    result = json.loads(lines[-1][len("RESULT "):])
    # Imported from the fresh environment, not from this repository.
    assert Path(result["module"]).is_relative_to(venv)
    assert Path(result["jar"]).is_relative_to(venv)
    assert Path(result["jar"]).name == _jar.jar_name(_jar.spark_line(pyspark.__version__), _jar._installed_scala_version())
    assert result["spark"] == pyspark.__version__
    assert result["batch"] == [[0, "final", 5], [10, "final", 12], [20, "final", 25]]
    assert result["sql"] == [[1, 4, "final", 5], [12, 25, "final", 37]]
    assert result["streamed"] == TUMBLING_STREAM_RESULT
