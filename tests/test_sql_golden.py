"""SQL around `sw_*` windows, tested the way Spark tests window() in SQL: the queries of
tests/sql/*.sql run in order and their schemas and outputs are compared with the golden file next to
them (`<name>.sql.out`; on Spark 3.5, whose own errors read differently, `<name>.sql.spark-3.5.out`). Regenerate a golden file after a deliberate change with
`STREAMWIN_SQL_RECORD=1 bin/test tests/test_sql_golden.py`, and read its diff."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from pyspark.sql import functions as F

import streamwin as sw
from spark_lines import SPARK_3

SQL_DIR = Path(__file__).parent / "sql"


def views(spark):
    readings = [("a", 1, 1.0), ("a", 3, 2.0), ("a", 8, 4.0), ("a", 12, 8.0), ("a", 14, 16.0), ("a", 31, 32.0),
                ("b", 2, 1.5), ("b", 11, 2.5), ("b", 19, 3.5), ("b", 20, 4.5)]
    spark.createDataFrame(readings, "k string, s int, v double") \
        .select("k", F.timestamp_seconds(F.col("s") + F.lit(1704067200)).alias("ts"), "v") \
        .createOrReplaceTempView("readings")
    spark.createDataFrame([("a", i, i * 3, float(i)) for i in range(5)] + [("b", i, i, float(10 * i)) for i in range(3)],
                          "k string, seq int, s int, v double") \
        .select("k", "seq", F.timestamp_seconds(F.col("s") + F.lit(1704067200)).alias("ts"), "v") \
        .createOrReplaceTempView("events")


def queries(path: Path) -> list[str]:
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("--"))
    return [q.strip() for q in text.split(";") if q.strip()]


def run(spark, query: str) -> str:
    """Spark's golden format: the schema, then the rows (sorted unless the query orders them), or the error."""
    try:
        df = spark.sql(query)
        rows = ["\t".join("NULL" if v is None else str(v) for v in row) for row in df.collect()]
        if not re.search(r"\bORDER\s+BY\b", query, re.IGNORECASE):
            rows.sort()
        return f"-- !query schema\n{df.schema.simpleString()}\n-- !query output\n" + "\n".join(rows)
    except Exception as e:  # the error a user sees: its class and first line
        message = str(e).strip().splitlines()[0]
        message = re.sub(r"#\d+", "", message)  # expression ids vary between runs
        return f"-- !query output\n{type(e).__name__}\n{message}"


def golden(spark, path: Path) -> str:
    views(spark)
    return "".join(f"-- !query\n{q}\n{run(spark, q)}\n\n\n" for q in queries(path))


@pytest.mark.parametrize("path", sorted(SQL_DIR.glob("*.sql")), ids=lambda p: p.name)
def test_sql_matches_golden_file(spark, path):
    # Spark 3.5 words some of Spark's own errors differently: its golden file is its own.
    out = path.with_name(path.name + (".spark-3.5.out" if SPARK_3 else ".out"))
    got = golden(spark, path)
    if os.environ.get("STREAMWIN_SQL_RECORD") == "1" or not out.exists():
        out.write_text(got)
        if os.environ.get("STREAMWIN_SQL_RECORD") != "1":
            pytest.fail(f"{out} did not exist; written now, check it in")
    assert got == out.read_text()


def test_sw_queries_match_their_window_counterparts(spark):
    """Each sw_* query followed by the same query with window() gives the same rows (without `kind`)."""
    views(spark)
    qs = queries(SQL_DIR / "window_sql.sql")
    pairs = [(a, b) for a, b in zip(qs, qs[1:]) if "sw_" in a and "window(ts" in b]
    assert len(pairs) >= 10
    for ours, theirs in pairs:
        def rows(q):
            df = spark.sql(q)
            def plain(v):
                return tuple(v[:2]) if hasattr(v, "kind") else v  # a window struct without its kind
            return sorted((tuple(plain(v) for v in r) for r in df.collect()), key=repr)
        assert rows(ours) == rows(theirs), (ours, theirs)


def test_sql_window_fields_equal_the_dataframe_api(spark):
    views(spark)
    sql = spark.sql("SELECT k, window.start, window.end, window.kind, count(*) AS n, sum(v) AS s FROM readings "
                    "GROUP BY k, sw_session(ts, '4 seconds') HAVING count(*) > 1 ORDER BY k, window.start").collect()
    api = (spark.table("readings").groupBy("k", sw.session("ts", "4 seconds"))
           .agg(F.count("*").alias("n"), F.sum("v").alias("s")).where("n > 1")
           .select("k", "window.start", "window.end", "window.kind", "n", "s").orderBy("k", "start").collect())
    assert sql == api and len(sql) >= 2


def test_order_by_aggregates_and_window_fields_of_a_windowed_query(spark):
    # ORDER BY an aggregate beside a constant column (count(*) is count(1): its 1 is not the column `one`),
    # and ORDER BY a selected window field above a HAVING.
    views(spark)
    rows = spark.sql("SELECT window.start AS start, 1 AS one, sum(v) AS s FROM readings "
                     "GROUP BY sw_tumbling(ts, '10 seconds') ORDER BY count(*) DESC, start").collect()
    theirs = spark.sql("SELECT window.start AS start, 1 AS one, sum(v) AS s FROM readings "
                       "GROUP BY window(ts, '10 seconds') ORDER BY count(*) DESC, start").collect()
    assert rows == theirs and len(rows) == 4
    having = spark.sql("SELECT k, window.start, count(*) AS n FROM readings GROUP BY k, sw_session(ts, '4 seconds') "
                       "HAVING count(*) > 1 ORDER BY k, window.start DESC").collect()
    api = (spark.table("readings").groupBy("k", sw.session("ts", "4 seconds")).agg(F.count("*").alias("n"))
           .where("n > 1").select("k", "window.start", "n").orderBy("k", F.col("start").desc()).collect())
    assert having == api and len(having) >= 2

