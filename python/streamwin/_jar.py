"""Finding the ``streamwin`` jar that matches the installed Spark, and adding it to a SparkSession builder.

The package bundles one jar per supported Spark line and Scala version (``jars/streamwin-spark4.3_2.13.jar``,
``jars/streamwin-spark3.5_2.12.jar``, ...): Spark's internal APIs differ between lines, and a jar runs only
on the Scala version it was compiled with.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Optional

from pyspark.sql import SparkSession

_PACKAGE_DIR = Path(__file__).resolve().parent

#: The Spark lines (major.minor) this release of streamwin supports; the wheel bundles a jar for each.
SUPPORTED_SPARK_LINES = ("3.5", "4.0", "4.1", "4.2", "4.3")
#: The Scala versions each line has a jar for, the one its pyspark and default distribution run first.
SCALA_VERSIONS = {"3.5": ("2.12", "2.13"), "4.0": ("2.13",), "4.1": ("2.13",), "4.2": ("2.13",), "4.3": ("2.13",)}


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


def jar_name(line: str, scala: Optional[str] = None) -> str:
    """The file name of the jar built for a Spark line and Scala version (by default the Scala version the
    line's pyspark runs), e.g. ``streamwin-spark4.3_2.13.jar``.

    Example::

        >>> from streamwin._jar import jar_name
        >>> jar_name("3.5"), jar_name("3.5", "2.13"), jar_name("4.3")
        ('streamwin-spark3.5_2.12.jar', 'streamwin-spark3.5_2.13.jar', 'streamwin-spark4.3_2.13.jar')
    """
    return f"streamwin-spark{line}_{scala or SCALA_VERSIONS.get(line, ('2.13',))[0]}.jar"


def _installed_spark_version() -> str:
    import pyspark

    return pyspark.__version__


def _installed_scala_version() -> Optional[str]:
    """The Scala version of the installed Spark's jars (pyspark's own, or ``$SPARK_HOME/jars``), if found."""
    import pyspark

    # pyspark starts its JVM from SPARK_HOME when it is set: its jars first.
    folders = [Path(os.environ["SPARK_HOME"]) / "jars"] if os.environ.get("SPARK_HOME") else []
    folders.append(Path(pyspark.__file__).resolve().parent / "jars")
    for folder in folders:
        for core in sorted(folder.glob("spark-core_*.jar")):
            match = re.match(r"spark-core_(\d+\.\d+)-", core.name)
            if match:
                return match.group(1)
    return None


def _check_supported(version: str, installed: bool) -> str:
    line = spark_line(version)
    if line not in SUPPORTED_SPARK_LINES:
        raise UnsupportedSparkVersionError(
            f"streamwin does not support Spark {version}{' (the installed pyspark)' if installed else ''}: "
            "it supports Spark "
            + ", ".join(f"{l}.x" for l in SUPPORTED_SPARK_LINES)
            + ". Install one of those, e.g. pip install 'pyspark>=3.5,<4.4'."
        )
    return line


def _check_scala(line: str, version: str, scala: str) -> str:
    if scala not in SCALA_VERSIONS[line]:
        raise UnsupportedSparkVersionError(
            f"streamwin has no jar for Spark {version} built with Scala {scala}: Spark {line} jars are built for "
            "Scala " + ", ".join(SCALA_VERSIONS[line]) + ". Run a Spark distribution built with one of those."
        )
    return scala


def jar_path(spark_version: Optional[str] = None, scala_version: Optional[str] = None) -> str:
    """Return the path of the bundled jar built for the installed Spark (or for ``spark_version``).

    The jar is the one of the Spark line and of the Scala version the installed Spark's jars were built
    with (``scala_version``, e.g. ``"2.12"``, chooses it; by default the line's pyspark's: Scala 2.12 for 3.5,
    2.13 for 4.x). Pass it to ``spark-submit --jars`` or ``spark.jars``. ``STREAMWIN_JAR`` overrides it (for
    a jar built elsewhere). A Spark line streamwin does not support, or a Scala version it has no jar for,
    raises :class:`UnsupportedSparkVersionError`, naming the versions.

    Example::

        >>> import pyspark
        >>> import streamwin as sw
        >>> from streamwin._jar import spark_line
        >>> from pathlib import Path
        >>> Path(sw.jar_path()).name.startswith(f"streamwin-spark{spark_line(pyspark.__version__)}_")
        True
        >>> sw.jar_path("3.4.1")
        Traceback (most recent call last):
            ...
        streamwin._jar.UnsupportedSparkVersionError: streamwin does not support Spark 3.4.1: it supports Spark 3.5.x, 4.0.x, 4.1.x, 4.2.x, 4.3.x. Install one of those, e.g. pip install 'pyspark>=3.5,<4.4'.
        >>> sw.jar_path("4.0.1", "2.12")
        Traceback (most recent call last):
            ...
        streamwin._jar.UnsupportedSparkVersionError: streamwin has no jar for Spark 4.0.1 built with Scala 2.12: Spark 4.0 jars are built for Scala 2.13. Run a Spark distribution built with one of those.
    """
    override = os.environ.get("STREAMWIN_JAR")
    if override:
        if not Path(override).is_file():
            raise FileNotFoundError(f"STREAMWIN_JAR={override} is not a file")
        return override
    version = spark_version or _installed_spark_version()
    line = _check_supported(version, installed=spark_version is None)
    scala = scala_version or (_installed_scala_version() if spark_version is None else None)
    name = jar_name(line, _check_scala(line, version, scala) if scala else None)
    # The installed package's jar, else (a source checkout) the one the build wrote to dist/.
    candidates = [_PACKAGE_DIR / "jars" / name, _PACKAGE_DIR.parent.parent / "dist" / name]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(
        f"no streamwin jar for Spark {line} (looked at " + ", ".join(map(str, candidates)) + "); in a source "
        f"checkout build it with `SPARK_VERSION={version} bin/sbt dist` (3.5's Scala 2.13 jar: `bin/sbt "
        "spark35_213/dist`; every jar: `bin/sbt distAll`), "
        "or set STREAMWIN_JAR"
    )


#: The state store :func:`configure` selects: it keeps streaming windows' state off the JVM heap.
ROCKSDB_STATE_STORE = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_STATE_STORE_KEY = "spark.sql.streaming.stateStore.providerClass"
_CHANGELOG_KEY = "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled"
_EXTENSIONS_KEY = "spark.sql.extensions"
_EXTENSION_CLASS = "streamwin.StreamwinExtensions"


def _submitted_conf(key: str) -> str:
    """A setting spark-submit gave the driver's JVM (``--conf``, spark-defaults), which a builder's own
    setting of the key would replace; empty outside spark-submit."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return ""
    from pyspark import SparkContext

    SparkContext._ensure_initialized()
    return str(SparkContext._jvm.java.lang.System.getProperty(key) or "")  # type: ignore[union-attr]


def _submitted_jars() -> list[str]:
    """The jars spark-submit was given (``--jars``, and ``--packages`` once resolved), which a builder's own
    ``spark.jars`` would replace: spark-submit hands them to the driver's JVM, which is already up."""
    return [j for j in _submitted_conf("spark.jars").split(",") if j]


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the streamwin jar matching the installed Spark to a SparkSession builder and return it.

    The jar registers streamwin's SQL functions, analyzer rule and planner by itself (a
    ``SparkSessionExtensionsProvider`` service). Windows on streaming DataFrames keep their state in
    Spark's state store, on either provider; the RocksDB provider, which keeps it off the JVM heap, is
    set too, unless the builder already names one, and with it RocksDB's changelog checkpointing
    (each micro-batch writes only its changes: every benchmarked stream ran faster with it, Spark's own
    aggregation too), unless the builder sets that. Jars already in ``spark.jars`` (the builder's, or
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
        >>> spark.conf.get("spark.jars").split("/")[-1].startswith("streamwin-spark")
        True
        >>> spark.conf.get("spark.sql.streaming.stateStore.providerClass").endswith("RocksDBStateStoreProvider")
        True
        >>> spark.conf.get("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled")
        'true'
    """
    options = getattr(builder, "_options", {})
    existing = _submitted_jars() + [j for j in str(options.get("spark.jars", "")).split(",") if j]
    existing = list(dict.fromkeys(existing))
    jar = jar_path()
    if jar not in existing:
        existing.append(jar)
    builder = builder.config("spark.jars", ",".join(existing))
    if spark_line(_installed_spark_version()) == "3.5":
        # PySpark 3.5 makes its JVM session without Spark's service lookup of extensions (4.0 added it):
        # streamwin is named in spark.sql.extensions instead, beside any the builder names.
        named = [e.strip() for e in (_submitted_conf(_EXTENSIONS_KEY) + "," + str(options.get(_EXTENSIONS_KEY, "")))
                 .split(",") if e.strip()]
        named = list(dict.fromkeys(named))
        if _EXTENSION_CLASS not in named:
            builder = builder.config(_EXTENSIONS_KEY, ",".join(named + [_EXTENSION_CLASS]))
    if _STATE_STORE_KEY not in options:
        builder = builder.config(_STATE_STORE_KEY, ROCKSDB_STATE_STORE)
        if _CHANGELOG_KEY not in options and not _submitted_conf(_CHANGELOG_KEY):
            builder = builder.config(_CHANGELOG_KEY, "true")
    return builder
