"""Reading streamwin's row accounting from a query that has run."""

from __future__ import annotations

from typing import Union

from pyspark import SparkContext
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery


def window_metrics(df: Union[DataFrame, StreamingQuery]) -> dict[str, int]:
    """Return the sums of streamwin's metrics over the executed plan of ``df``, or of a streaming query.

    Call it after an action on the very same DataFrame object (``collect()``, ``count()`` on it,
    a write). Keys: ``numOutputRows``, ``windowsEmitted``, ``rowsWindowed`` (input rows that went
    into a window), ``rowsSkipped`` (null time or order, or between hopping windows),
    ``lateRowsDropped``, ``lateRowsPassedThrough`` (``late="passthrough"``), ``peakBufferedRows`` and
    ``spillSize`` (bytes of rows kept by windows that went to disk, see ``spark.streamwin.buffer.memoryBytes``).
    Every input row is windowed, late (dropped or passed through) or skipped.
    For a ``StreamingQuery`` the counts are summed over the micro-batches it ran since it started
    (or restarted from its checkpoint), without ``peakBufferedRows``.
    Only classic PySpark (not Spark Connect) exposes the executed plan.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS ts FROM VALUES (1), (NULL), (12) AS t(s)")
    >>> q = df.groupBy(sw.tumbling("ts", "10 seconds")).count()
    >>> _ = q.collect()
    >>> m = sw.window_metrics(q)
    >>> (m["rowsWindowed"], m["rowsSkipped"], m["windowsEmitted"])
    (2, 1, 2)
    """
    if isinstance(df, StreamingQuery):
        jsq = getattr(df, "_jsq", None)
        if jsq is None:
            raise TypeError("window_metrics needs a classic PySpark streaming query; Spark Connect does not expose plans")
        jvm = SparkContext._jvm  # type: ignore[attr-defined]
        report = jvm.streamwin.api.WindowMetricsReport.ofQuery(jsq)
        return {str(k): int(report.get(k)) for k in report.keySet()}
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        raise TypeError("window_metrics needs a classic PySpark DataFrame; Spark Connect does not expose plans")
    report = df.sparkSession._jvm.streamwin.api.WindowMetricsReport.of(jdf)  # type: ignore[union-attr]
    return {str(k): int(report.get(k)) for k in report.keySet()}
