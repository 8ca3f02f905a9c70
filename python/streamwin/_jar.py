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


def configure(builder: SparkSession.Builder) -> SparkSession.Builder:
    """Add the bundled ``streamwin.jar`` to a SparkSession builder and return the builder.

    The jar registers streamwin's SQL functions, analyzer rule and planner by itself (a
    ``SparkSessionExtensionsProvider`` service), so no other setting is needed. Jars already in
    ``spark.jars`` are kept. Call it before ``getOrCreate()``: a running session cannot load jars.

    Example::

        >>> from pyspark.sql import SparkSession
        >>> import streamwin as sw
        >>> builder = sw.configure(SparkSession.builder.master("local[1]"))
        >>> spark = builder.getOrCreate()
        >>> spark.conf.get("spark.jars").endswith("streamwin.jar")
        True
    """
    options = getattr(builder, "_options", {})
    existing = [j for j in str(options.get("spark.jars", "")).split(",") if j]
    jar = jar_path()
    if jar not in existing:
        existing.append(jar)
    return builder.config("spark.jars", ",".join(existing))
