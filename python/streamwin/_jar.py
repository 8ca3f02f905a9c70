"""Finding the bundled ``streamwin.jar`` and adding it to a SparkSession builder."""

from __future__ import annotations

import os
from pathlib import Path

from pyspark.sql import SparkSession

_PACKAGE_DIR = Path(__file__).resolve().parent


def jar_path() -> str:
    """Return the path of the ``streamwin.jar`` that ships with this package.

    ``STREAMWIN_JAR`` overrides it (for a jar built elsewhere).

    Example::

        >>> import streamwin as sw
        >>> sw.jar_path().endswith("streamwin.jar")
        True
    """
    override = os.environ.get("STREAMWIN_JAR")
    candidates = [Path(override)] if override else []
    candidates += [_PACKAGE_DIR / "jars" / "streamwin.jar", _PACKAGE_DIR.parent.parent / "dist" / "streamwin.jar"]
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate)
    raise FileNotFoundError(
        "streamwin.jar not found (looked at " + ", ".join(map(str, candidates)) + "); "
        "build it with `bin/sbt dist` or set STREAMWIN_JAR"
    )


#: The state store that Spark's ``transformWithState`` (which hosts streaming windows) requires.
ROCKSDB_STATE_STORE = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
_STATE_STORE_KEY = "spark.sql.streaming.stateStore.providerClass"


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled ``streamwin.jar`` to a SparkSession builder and return the builder.

    The jar registers streamwin's SQL functions, analyzer rule and planner by itself (a
    ``SparkSessionExtensionsProvider`` service). Windows on streaming DataFrames keep their state in
    Spark's state store through ``transformWithState``, which needs the RocksDB state store provider:
    it is set too, unless the builder already names a provider (then a streaming window fails at
    analysis with a message saying how to fix it). Jars already in ``spark.jars`` are kept. Call it
    before ``getOrCreate()``: a running session cannot load jars.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> import streamwin as sw
        >>> builder = sw.configure(SparkSession.builder.master("local[1]"))
        >>> spark = builder.getOrCreate()
        >>> spark.conf.get("spark.jars").endswith("streamwin.jar")
        True
        >>> spark.conf.get("spark.sql.streaming.stateStore.providerClass").endswith("RocksDBStateStoreProvider")
        True
    """
    options = getattr(builder, "_options", {})
    existing = [j for j in str(options.get("spark.jars", "")).split(",") if j]
    jar = jar_path()
    if jar not in existing:
        existing.append(jar)
    builder = builder.config("spark.jars", ",".join(existing))
    if _STATE_STORE_KEY not in options:
        builder = builder.config(_STATE_STORE_KEY, ROCKSDB_STATE_STORE)
    return builder
