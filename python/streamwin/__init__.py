"""streamwin: the windows of stream processors (KX, eKuiper, Quix, IBM Streams SPL) for Spark.

Each window function returns a :class:`pyspark.sql.Column` named ``window`` (a struct of ``start``,
``end`` and ``kind``). Group by it for one row per window, or select it to tag every row with the
windows holding it::

    import streamwin as sw
    from pyspark.sql import SparkSession, functions as F

    spark = sw.configure(SparkSession.builder.master("local[2]")).getOrCreate()
    df = spark.createDataFrame(
        [("a", "2024-01-01 00:00:01", 20.0), ("a", "2024-01-01 00:00:12", 22.0)],
        "sensor string, ts string, temp double",
    ).withColumn("ts", F.to_timestamp("ts"))
    df.groupBy("sensor", sw.tumbling("ts", "10 seconds")).agg(F.avg("temp")).show()
"""

from streamwin._jar import SUPPORTED_SPARK_LINES, UnsupportedSparkVersionError, configure, jar_path
from streamwin.metrics import window_metrics
from streamwin import windows as _windows
from streamwin.windows import *  # noqa: F401,F403 (the window functions, listed in windows.__all__)

__all__ = ["configure", "jar_path", "window_metrics", "SUPPORTED_SPARK_LINES", "UnsupportedSparkVersionError",
           *_windows.__all__]
__version__ = "0.1.0"
