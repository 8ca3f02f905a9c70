"""Tumbling and hopping windows: exact results, against Spark's window() and a pure-Python model."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.sql import Row
from pyspark.sql import functions as F

import streamwin as sw

EPOCH = dt.datetime(1970, 1, 1)
SECOND = 1_000_000


def ts(micros: int) -> dt.datetime:
    return EPOCH + dt.timedelta(microseconds=micros)


def micros(t: dt.datetime) -> int:
    return (t - EPOCH) // dt.timedelta(microseconds=1)


# Rows of (key, event time in microseconds or None, value); times span negative and positive epochs.
rows_strategy = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.one_of(st.none(), st.integers(-120 * SECOND, 300 * SECOND)),
        st.integers(-50, 50),
    ),
    min_size=0,
    max_size=150,
)
partitions = st.integers(1, 6)


def make_df(spark, rows, n_partitions):
    data = [(k, None if t is None else ts(t), v) for k, t, v in rows]
    df = spark.createDataFrame(data, "k int, ts timestamp, v int")
    return df.repartition(n_partitions)


def grouped(df, window):
    return df.groupBy("k", window).agg(
        F.sum("v").alias("s"),
        F.count("*").alias("n"),
        F.min("v").alias("lo"),
        F.max("v").alias("hi"),
        F.sort_array(F.collect_list("v")).alias("vs"),
    )


def as_set(df, with_kind=True):
    out = set()
    for r in df.collect():
        w = r["window"]
        key = (r.k, w.start, w.end) + ((w.kind,) if with_kind else ())
        out.add(key + (r.s, r.n, r.lo, r.hi, tuple(r.vs)))
    return out


def spark_window_set(df, size, step, start):
    ref = grouped(df.where(F.col("ts").isNotNull()), F.window("ts", size, step, start))
    return as_set(ref, with_kind=False)


@given(rows=rows_strategy, n=partitions, shuffle=st.integers(1, 5))
def test_tumbling_equals_spark_window(spark, rows, n, shuffle):
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))
    df = make_df(spark, rows, n)
    ours = grouped(df, sw.tumbling("ts", "10 seconds"))
    got = as_set(ours)
    assert {g[-6] for g in got} <= {"final"}
    assert {g[:3] + g[4:] for g in got} == spark_window_set(df, "10 seconds", "10 seconds", "0 seconds")


@given(
    rows=rows_strategy,
    n=partitions,
    spec=st.sampled_from(
        [("10 seconds", "5 seconds", "0 seconds"), ("30 seconds", "10 seconds", "3 seconds"),
         ("60 seconds", "1 second", "0 seconds"), ("7 seconds", "3 seconds", "-2 seconds"),
         ("10 seconds", "10 seconds", "4 seconds")]
    ),
)
def test_hopping_equals_spark_window(spark, rows, n, spec):
    size, step, offset = spec
    df = make_df(spark, rows, n)
    got = as_set(grouped(df, sw.hopping("ts", size, step, offset=offset)))
    assert {g[:3] + g[4:] for g in got} == spark_window_set(df, size, step, offset)


def model_hopping(rows, size, step, offset):
    """Pure-Python hopping windows (any step, gaps allowed): {(k, start, end): [values]}."""
    windows = defaultdict(list)
    for k, t, v in rows:
        if t is None:
            continue
        first = t - ((t - offset) % step)  # latest start at or before t
        start = first
        while start + size > t:
            windows[(k, start, start + size)].append(v)
            start -= step
    return windows


@given(rows=rows_strategy, n=partitions,
       spec=st.sampled_from([(5, 10, 0), (3, 10, 4), (2, 7, -1), (10, 10, 0), (12, 4, 2)]))
def test_hopping_with_gaps_matches_model(spark, rows, n, spec):
    size, step, offset = (x * SECOND for x in spec)
    df = make_df(spark, rows, n)
    out = grouped(df, sw.hopping("ts", dt.timedelta(microseconds=size), dt.timedelta(microseconds=step),
                                 offset=dt.timedelta(microseconds=offset)))
    got = {(r.k, micros(r.window.start), micros(r.window.end)): tuple(r.vs) for r in out.collect()}
    expected = {key: tuple(sorted(vs)) for key, vs in model_hopping(rows, size, step, offset).items()}
    assert got == expected


@given(rows=rows_strategy, n=partitions,
       spec=st.sampled_from([(10, 10, 0), (10, 5, 0), (5, 10, 0), (6, 4, 1)]))
def test_select_tags_each_row_with_each_window(spark, rows, n, spec):
    size, step, offset = (x * SECOND for x in spec)
    df = make_df(spark, rows, n).withColumn("id", F.monotonically_increasing_id())
    ours = df.select("id", "ts", sw.hopping("ts", dt.timedelta(microseconds=size), dt.timedelta(microseconds=step),
                                           offset=dt.timedelta(microseconds=offset)))
    got = sorted((r.id, micros(r.window.start), micros(r.window.end), r.window.kind) for r in ours.collect())
    # Reference 1: the model, row by row (defined for gaps too).
    expected = sorted(
        (r.id, start, end, "final")
        for r in df.select("id", "ts").collect() if r.ts is not None
        for (_, start, end) in model_hopping([(0, micros(r.ts), 0)], size, step, offset)
    )
    assert got == expected
    if step <= size:  # Reference 2: Spark's window(), which only allows step <= size.
        ref = df.where(F.col("ts").isNotNull()).select(
            "id", F.window("ts", f"{spec[0]} seconds", f"{spec[1]} seconds", f"{spec[2]} seconds").alias("w"))
        assert got == sorted((r.id, micros(r.w.start), micros(r.w.end), "final") for r in ref.collect())


def test_tumbling_exact_rows_and_offset(spark):
    df = spark.createDataFrame(
        [("a", ts(1 * SECOND), 1), ("a", ts(9 * SECOND), 2), ("a", ts(10 * SECOND), 4), ("b", ts(3 * SECOND), 8)],
        "k string, ts timestamp, v int",
    )
    out = df.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("s")).orderBy("k", "window")
    assert out.collect() == [
        Row(k="a", window=Row(start=ts(0), end=ts(10 * SECOND), kind="final"), s=3),
        Row(k="a", window=Row(start=ts(10 * SECOND), end=ts(20 * SECOND), kind="final"), s=4),
        Row(k="b", window=Row(start=ts(0), end=ts(10 * SECOND), kind="final"), s=8),
    ]
    shifted = df.groupBy("k", sw.tumbling("ts", "10 seconds", offset="2 seconds")).agg(F.sum("v").alias("s"))
    assert sorted((r.k, micros(r.window.start) // SECOND, r.s) for r in shifted.collect()) == [
        ("a", -8, 1), ("a", 2, 6), ("b", 2, 8)]


def test_no_key_is_one_global_stream(spark):
    df = spark.createDataFrame([(ts(s * SECOND), s) for s in (0, 5, 11, 25)], "ts timestamp, v int")
    out = df.groupBy(sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("s")).orderBy("window")
    assert [(micros(r.window.start) // SECOND, r.s) for r in out.collect()] == [(0, 5), (10, 11), (20, 25)]


def test_every_spark_aggregate_works(spark):
    data = [("a", ts(s * SECOND), float(v)) for s, v in [(0, 1), (1, 2), (2, 4), (3, 8), (12, 3), (15, 5)]]
    df = spark.createDataFrame(data, "k string, ts timestamp, v double").repartition(3)

    def aggregate(window):
        return df.groupBy("k", window).agg(
            F.sum("v").alias("sum"), F.avg("v").alias("avg"), F.min("v").alias("min"), F.max("v").alias("max"),
            F.count("v").alias("count"), F.sort_array(F.collect_list("v")).alias("list"),
            F.sort_array(F.collect_set("v")).alias("set"),
            F.percentile_approx("v", 0.5).alias("median"), F.stddev("v").alias("stddev"),
            F.variance("v").alias("var"), F.count_if(F.col("v") > 2).alias("big"),
            F.sum("v").filter if False else F.expr("sum(v) FILTER (WHERE v > 2)").alias("sum_big"),
            F.approx_count_distinct("v").alias("distinct"),
            F.max_by("v", "ts").alias("latest"), F.min_by("v", "ts").alias("earliest"),
            F.bool_and(F.col("v") > 0).alias("positive"),
        )

    ours = {(r.window.start, r.window.end): r.asDict() for r in aggregate(sw.tumbling("ts", "10 seconds")).collect()}
    ref = {(r.window.start, r.window.end): r.asDict() for r in aggregate(F.window("ts", "10 seconds")).collect()}
    assert ours.keys() == ref.keys() and len(ours) == 2
    for key in ours:
        a, b = ours[key], ref[key]
        for field in b:
            if field in ("window",):
                continue
            if field in ("stddev", "var", "avg"):
                assert a[field] == pytest.approx(b[field]), field
            else:
                assert a[field] == b[field], field
    first_window = ours[(ts(0), ts(10 * SECOND))]
    assert (first_window["sum"], first_window["count"], first_window["list"], first_window["median"],
            first_window["sum_big"], first_window["latest"]) == (15.0, 4, [1.0, 2.0, 4.0, 8.0], 2.0, 12.0, 8.0)


def test_null_time_skipped_and_counted(spark):
    df = spark.createDataFrame([(ts(SECOND), 1), (None, 2), (ts(12 * SECOND), 3), (None, 4)], "ts timestamp, v int")
    q = df.groupBy(sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("s"))
    assert sorted(r.s for r in q.collect()) == [1, 3]
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["rowsSkipped"], m["windowsEmitted"], m["numOutputRows"]) == (2, 2, 2, 2)
    tagged = df.select("v", sw.tumbling("ts", "10 seconds"))
    assert sorted(r.v for r in tagged.collect()) == [1, 3]
    m = sw.window_metrics(tagged)
    assert (m["rowsWindowed"], m["rowsSkipped"]) == (2, 2)


def test_gap_rows_are_counted_as_skipped(spark):
    df = spark.createDataFrame([(ts(s * SECOND),) for s in (1, 6, 11, 17)], "ts timestamp")
    q = df.groupBy(sw.hopping("ts", "5 seconds", "10 seconds")).count()
    assert sorted((micros(r.window.start) // SECOND, r["count"]) for r in q.collect()) == [(0, 1), (10, 1)]
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["rowsSkipped"]) == (2, 2)


def test_timestamp_ntz_keeps_its_type(spark):
    df = spark.sql("SELECT TIMESTAMP_NTZ'2024-01-01 00:00:07' AS ts, 1 AS v")
    out = df.groupBy(sw.tumbling("ts", "10 seconds")).agg(F.sum("v"))
    assert out.schema["window"].dataType.simpleString() == "struct<start:timestamp_ntz,end:timestamp_ntz,kind:string>"
    assert out.first().window.start == dt.datetime(2024, 1, 1, 0, 0, 0)


def test_grouping_by_an_expression_and_selecting_window_fields(spark):
    df = spark.createDataFrame([(i, ts(i * SECOND)) for i in range(20)], "v int, ts timestamp")
    out = (df.groupBy((F.col("v") % 2).alias("parity"), sw.tumbling("ts", "10 seconds"))
           .agg(F.sum("v").alias("s"))
           .select("parity", F.col("window.start").alias("start"), "s"))
    assert sorted((r.parity, micros(r.start) // SECOND, r.s) for r in out.collect()) == [
        (0, 0, 20), (0, 10, 70), (1, 0, 25), (1, 10, 75)]


def test_renamed_window_column(spark):
    df = spark.createDataFrame([(ts(SECOND), 1), (ts(15 * SECOND), 2)], "ts timestamp, v int")
    grouped = df.groupBy(sw.tumbling("ts", "10 seconds").alias("w")).agg(F.sum("v").alias("s"))
    assert grouped.columns == ["w", "s"]
    assert sorted((micros(r.w.start) // SECOND, r.s) for r in grouped.collect()) == [(0, 1), (10, 2)]
    tagged = df.select("v", sw.tumbling("ts", "10 seconds").alias("w"))
    assert tagged.columns == ["v", "w"] and sorted(r.w.kind for r in tagged.collect()) == ["final", "final"]
