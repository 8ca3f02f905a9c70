"""Finding the ``streamwin`` jar that matches the installed Spark, and adding it to a SparkSession builder.

The package bundles one jar per supported Spark line (``jars/streamwin-spark4.3_2.13.jar``, ...):
Spark's internal APIs differ between lines, so each line has its own build.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from pyspark.sql import SparkSession

_PACKAGE_DIR = Path(__file__).resolve().parent

#: The Spark lines (major.minor) this release of streamwin supports; the wheel bundles a jar for each.
SUPPORTED_SPARK_LINES = ("4.0", "4.1", "4.2", "4.3")
SCALA_BINARY_VERSION = "2.13"


class UnsupportedSparkVersionError(RuntimeError):
    """The running Spark is not one of the lines streamwin supports."""


def spark_line(version: str) -> str:
    """The ``major.minor`` line of a Spark version string: ``"4.3.0"`` gives ``"4.3"``.

    Example::

        >>> from streamwin._jar import spark_line
        >>> spark_line("4.1.4")
        '4.1'
    """
    match = re.match(r"(\d+)\.(\d+)", version)
    if not match:
        raise UnsupportedSparkVersionError(f"cannot read a Spark version from {version!r}")
    return f"{match.group(1)}.{match.group(2)}"


def jar_name(line: str) -> str:
    """The file name of the jar built for a Spark line, e.g. ``streamwin-spark4.3_2.13.jar``."""
    return f"streamwin-spark{line}_{SCALA_BINARY_VERSION}.jar"


def _installed_spark_version() -> str:
    import pyspark

    return pyspark.__version__


def _check_supported(version: str, installed: bool) -> str:
    line = spark_line(version)
    if line not in SUPPORTED_SPARK_LINES:
        raise UnsupportedSparkVersionError(
            f"streamwin does not support Spark {version}{' (the installed pyspark)' if installed else ''}: "
            "it supports Spark "
            + ", ".join(f"{l}.x" for l in SUPPORTED_SPARK_LINES)
            + ". Install one of those, e.g. pip install 'pyspark>=4.0,<4.4'."
        )
    return line


def jar_path(spark_version: Optional[str] = None) -> str:
    """Return the path of the bundled jar built for the installed Spark (or for ``spark_version``).

    Pass it to ``spark-submit --jars`` or ``spark.jars``. ``STREAMWIN_JAR`` overrides it (for a jar
    built elsewhere). A Spark line streamwin does not support raises
    :class:`UnsupportedSparkVersionError`, naming the running version and the supported lines.

    Example::

        >>> import pyspark
        >>> import streamwin as sw
        >>> from streamwin._jar import spark_line
        >>> sw.jar_path().endswith(f"streamwin-spark{spark_line(pyspark.__version__)}_2.13.jar")
        True
        >>> sw.jar_path("3.5.1")
        Traceback (most recent call last):
            ...
        streamwin._jar.UnsupportedSparkVersionError: streamwin does not support Spark 3.5.1: it supports Spark 4.0.x, 4.1.x, 4.2.x, 4.3.x. Install one of those, e.g. pip install 'pyspark>=4.0,<4.4'.
    """
    override = os.environ.get("STREAMWIN_JAR")
    if override:
        if not Path(override).is_file():
            raise FileNotFoundError(f"STREAMWIN_JAR={override} is not a file")
        return override
    version = spark_version or _installed_spark_version()
    line = _check_supported(version, installed=spark_version is None)
    name = jar_name(line)
    # The installed package's jar, else (a source checkout) the one the build wrote to dist/.
    candidates = [_PACKAGE_DIR / "jars" / name, _PACKAGE_DIR.parent.parent / "dist" / name]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(
        f"no streamwin jar for Spark {line} (looked at " + ", ".join(map(str, candidates)) + "); in a source "
        f"checkout build it with `SPARK_VERSION={version} bin/sbt dist` (or every line with `bin/sbt distAll`), "
        "or set STREAMWIN_JAR"
    )


#: The state store :func:`configure` selects: it keeps streaming windows' state off the JVM heap.
ROCKSDB_STATE_STORE = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_STATE_STORE_KEY = "spark.sql.streaming.stateStore.providerClass"


def _submitted_jars() -> list[str]:
    """The jars spark-submit was given (``--jars``, and ``--packages`` once resolved), which a builder's own
    ``spark.jars`` would replace: spark-submit hands them to the driver's JVM, which is already up."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return []
    from pyspark import SparkContext

    SparkContext._ensure_initialized()
    submitted = SparkContext._jvm.java.lang.System.getProperty("spark.jars")  # type: ignore[union-attr]
    return [j for j in str(submitted or "").split(",") if j]


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the streamwin jar matching the installed Spark to a SparkSession builder and return it.

    The jar registers streamwin's SQL functions, analyzer rule and planner by itself (a
    ``SparkSessionExtensionsProvider`` service). Windows on streaming DataFrames keep their state in
    Spark's state store, on either provider; the RocksDB provider, which keeps it off the JVM heap, is
    set too, unless the builder already names one. Jars already in ``spark.jars`` (the builder's, or
    those given to ``spark-submit --jars`` or ``--packages``) are kept. Call it
    before ``getOrCreate()``: a running session cannot load jars. An unsupported Spark raises
    :class:`UnsupportedSparkVersionError` here, naming the running version and the supported ones.

    Windows keep their state in Spark's UnsafeRow encoding, as Spark's own streaming aggregations do;
    a session set to the state store's Avro encoding
    (``spark.sql.streaming.stateStore.encodingFormat=avro``) is refused at a stream's first micro-batch.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> import streamwin as sw
        >>> builder = sw.configure(SparkSession.builder.master("local[1]"))
        >>> spark = builder.getOrCreate()
        >>> spark.conf.get("spark.jars").endswith("_2.13.jar")
        True
        >>> spark.conf.get("spark.sql.streaming.stateStore.providerClass").endswith("RocksDBStateStoreProvider")
        True
    """
    options = getattr(builder, "_options", {})
    existing = _submitted_jars() + [j for j in str(options.get("spark.jars", "")).split(",") if j]
    existing = list(dict.fromkeys(existing))
    jar = jar_path()
    if jar not in existing:
        existing.append(jar)
    builder = builder.config("spark.jars", ",".join(existing))
    if _STATE_STORE_KEY not in options:
        builder = builder.config(_STATE_STORE_KEY, ROCKSDB_STATE_STORE)
    return builder
