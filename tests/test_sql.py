"""The same windows from SQL (`sw_*` functions, options as name/value pairs or named arguments)."""

from __future__ import annotations

import datetime as dt

from pyspark.sql import Row

import streamwin as sw


def test_sql_tumbling_group_by(spark):
    spark.sql("""
        SELECT * FROM VALUES ('s1', TIMESTAMP'2024-01-01 00:00:01', 20.0), ('s1', TIMESTAMP'2024-01-01 00:00:08', 22.0),
                             ('s1', TIMESTAMP'2024-01-01 00:00:13', 30.0), ('s2', TIMESTAMP'2024-01-01 00:00:02', 10.0)
        AS t(sensor, ts, temp)""").createOrReplaceTempView("readings")
    rows = spark.sql("""
        SELECT sensor, sw_tumbling(ts, '10 seconds') AS window, avg(temp) AS avg_temp
        FROM readings GROUP BY sensor, sw_tumbling(ts, '10 seconds') ORDER BY sensor, window""").collect()
    t0 = dt.datetime(2024, 1, 1)
    assert rows == [
        Row(sensor="s1", window=Row(start=t0, end=t0 + dt.timedelta(seconds=10), kind="final"), avg_temp=21.0),
        Row(sensor="s1", window=Row(start=t0 + dt.timedelta(seconds=10), end=t0 + dt.timedelta(seconds=20), kind="final"), avg_temp=30.0),
        Row(sensor="s2", window=Row(start=t0, end=t0 + dt.timedelta(seconds=10), kind="final"), avg_temp=10.0),
    ]


def test_sql_hopping_with_offset_and_window_fields(spark):
    rows = spark.sql("""
        SELECT window.start AS start, n FROM (
          SELECT sw_hopping(ts, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS, 'offset', '1 second') AS window, count(*) AS n
          FROM VALUES (TIMESTAMP'2024-01-01 00:00:02'), (TIMESTAMP'2024-01-01 00:00:07') AS t(ts)
          GROUP BY sw_hopping(ts, INTERVAL 10 SECONDS, INTERVAL 5 SECONDS, 'offset', '1 second'))
        ORDER BY start""").collect()
    assert [(r.start.second, r.n) for r in rows] == [(56, 1), (1, 2), (6, 1)]


def test_sql_count_with_named_arguments_and_select(spark):
    grouped = spark.sql("""
        SELECT k, sw_count(2, step => 1, order_by => seq) AS window, sum(v) AS s
        FROM VALUES ('a', 1, 10), ('a', 2, 20), ('a', 3, 30) AS t(k, seq, v)
        GROUP BY k, sw_count(2, step => 1, order_by => seq) ORDER BY window""").collect()
    assert [(r.window.start, r.window.end, r.window.kind, r.s) for r in grouped] == [
        (1, 2, "final", 30), (2, 3, "final", 50), (3, 3, "partial", 30)]
    tagged = spark.sql("""
        SELECT seq, sw_count(2, 'order_by', seq, 'partition_by', k) AS window
        FROM VALUES ('a', 1), ('a', 2), ('b', 1) AS t(k, seq) ORDER BY k, seq""").collect()
    assert [(r.seq, r.window.start, r.window.kind) for r in tagged] == [(1, 1, "final"), (2, 1, "final"), (1, 1, "partial")]


def test_functions_are_described(spark):
    text = "\n".join(r[0] for r in spark.sql("DESCRIBE FUNCTION EXTENDED sw_count").collect())
    assert "Count windows of size rows" in text and "Usage" in text


def test_every_python_window_function_is_exported_and_calls_its_sql_function(spark):
    import inspect

    from streamwin import windows

    public = sorted(n for n, f in vars(windows).items()
                    if inspect.isfunction(f) and f.__module__ == windows.__name__ and not n.startswith("_"))
    assert sorted(windows.__all__) == public
    assert all(getattr(sw, name) is getattr(windows, name) for name in public)
    registered = {r.function for r in spark.sql("SHOW FUNCTIONS LIKE 'sw_*'").collect()}
    assert registered == {f"sw_{name}" for name in public}
