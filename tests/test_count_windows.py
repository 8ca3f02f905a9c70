"""Count windows: the seeds' worked examples, a pure-Python model on random data, select vs groupBy."""

from __future__ import annotations

from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.errors import AnalysisException
from pyspark.sql import Row
from pyspark.sql import functions as F

import streamwin as sw


def test_kx_count_10_on_25_rows(spark):
    # KX `.qsp.window.count[10]` on `publish ([] x: til 25)`: two windows of ten, and the five left in
    # the buffer are emitted as a partial window on teardown.
    df = spark.range(25).withColumnRenamed("id", "x")
    out = df.groupBy(sw.count(10, order_by="x")).agg(F.collect_list("x").alias("xs")).orderBy("window")
    assert [(r.window.start, r.window.end, r.window.kind, r.xs) for r in out.collect()] == [
        (0, 9, "final", list(range(10))),
        (10, 19, "final", list(range(10, 20))),
        (20, 24, "partial", list(range(20, 25))),
    ]


QUIX_PURCHASES = [(100, 121, 1), (60, 165, 2), (200, 583, 3), (40, 723, 4), (120, 1009, 5), (80, 1242, 6)]


def test_quix_sliding_count_window_of_3(spark):
    # Quix `.sliding_count_window(count=3).mean().final()` on the six purchases of its docs:
    # averages 120, 100, 120, 80 with window_start_ms/window_end_ms 121-583, 165-723, 583-1009, 723-1242.
    df = spark.createDataFrame(QUIX_PURCHASES, "amount int, timestamp long, offset long")
    out = df.groupBy(sw.count(3, step=1, order_by="timestamp")).agg(F.avg("amount").alias("average"))
    final = [(r.average, r.window.start, r.window.end) for r in out.where("window.kind = 'final'").orderBy("window").collect()]
    assert final == [(120.0, 121, 583), (100.0, 165, 723), (120.0, 583, 1009), (80.0, 723, 1242)]
    # The two windows that began at the last two purchases never filled up: partial at the end of input.
    partial = [(r.average, r.window.start, r.window.end) for r in out.where("window.kind = 'partial'").orderBy("window").collect()]
    assert partial == [(100.0, 1009, 1242), (80.0, 1242, 1242)]


def test_quix_tumbling_count_window_of_3_collect(spark):
    # Quix `.tumbling_count_window(count=3).collect()`: {"data": [100, 50, 200], "window_start_ms": 121, "window_end_ms": 583}
    df = spark.createDataFrame([(100, 121, 1), (50, 165, 2), (200, 583, 3)], "data int, timestamp long, offset long")
    out = df.groupBy(sw.count(3, order_by="offset")).agg(F.collect_list("data").alias("data"), F.min("timestamp").alias("s"),
                                                          F.max("timestamp").alias("e"))
    assert [(r.data, r.s, r.e, r.window.kind) for r in out.collect()] == [([100, 50, 200], 121, 583, "final")]


def test_spl_tumbling_count_4_sums(spark):
    # SPL `window V : tumbling, count(4); output VSUM: cost = Sum(cost)`: every fourth tuple the window
    # is full, aggregated and emptied.
    costs = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3]
    df = spark.createDataFrame([(i, c) for i, c in enumerate(costs)], "seq int, cost int")
    out = df.groupBy(sw.count(4, order_by="seq")).agg(F.sum("cost").alias("cost")).orderBy("window")
    assert [(r.cost, r.window.kind) for r in out.collect()] == [(9, "final"), (22, "final"), (8, "partial")]


def test_quix_hopping_count_windows_of_6_step_2(spark):
    # Quix hopping count windows of 6 messages with a step of 2: [0, 5], [2, 7], [4, 9], [6, 11] …
    df = spark.range(12).withColumnRenamed("id", "i")
    out = df.groupBy(sw.count(6, step=2, order_by="i")).agg(F.count("*").alias("n")).where("window.kind = 'final'")
    assert [(r.window.start, r.window.end) for r in out.orderBy("window").collect()] == [(0, 5), (2, 7), (4, 9), (6, 11)]


def model_count(rows, size, step):
    """Pure-Python count windows: {(key, start_order, end_order, kind): [values in order]}."""
    by_key = defaultdict(list)
    for k, order, v in rows:
        if order is not None:
            by_key[k].append((order, v))
    out = {}
    for k, items in by_key.items():
        items.sort()
        for s in range(0, len(items), step):
            members = items[s:s + size]
            kind = "final" if len(members) == size else "partial"
            out[(k, members[0][0], members[-1][0], kind)] = [v for _, v in members]
    return out


def unique_orders(rows):
    """Makes order values distinct per key (ties are an error, tested on their own)."""
    seen, out = set(), []
    for k, order, v in rows:
        if order is not None and (k, order) in seen:
            continue
        if order is not None:
            seen.add((k, order))
        out.append((k, order, v))
    return out


count_rows = st.lists(
    st.tuples(st.integers(0, 6), st.one_of(st.none(), st.integers(-1000, 1000)), st.integers(-100, 100)),
    max_size=150,
).map(unique_orders)


@st.composite
def size_and_step(draw):
    size = draw(st.integers(1, 7))
    step = draw(st.one_of(st.none(), st.integers(1, size)))
    return size, step


@given(rows=count_rows, spec=size_and_step(), n=st.integers(1, 6), shuffle=st.integers(1, 5))
def test_count_windows_match_model(spark, rows, spec, n, shuffle):
    size, step = spec
    spark.conf.set("spark.sql.shuffle.partitions", str(shuffle))
    df = spark.createDataFrame(rows, "k int, seq int, v int").repartition(n)
    out = df.groupBy("k", sw.count(size, step=step, order_by="seq")).agg(
        F.collect_list("v").alias("vs"), F.sum("v").alias("s"), F.first("v").alias("first"),
        F.last("v").alias("last"), F.max("v").alias("hi"), F.count("v").alias("n"))
    got = {}
    for r in out.collect():
        w = r.window
        got[(r.k, w.start, w.end, w.kind)] = r.vs
        assert r.s == sum(r.vs) and r.hi == max(r.vs) and r.n == len(r.vs)
        assert (r.first, r.last) == (r.vs[0], r.vs[-1])  # order-sensitive aggregates follow order_by
    assert got == model_count(rows, size, step or size)
    m = sw.window_metrics(out)
    assert m["rowsWindowed"] + m["rowsSkipped"] == len(rows)
    assert m["rowsSkipped"] == sum(1 for _, o, _ in rows if o is None)


@given(rows=count_rows, spec=size_and_step(), n=st.integers(1, 6))
def test_select_tags_rows_and_agrees_with_groupby(spark, rows, spec, n):
    size, step = spec
    df = spark.createDataFrame(rows, "k int, seq int, v int").repartition(n)
    tagged = df.select("k", "seq", "v", sw.count(size, step=step, order_by="seq", partition_by="k"))
    members = defaultdict(list)
    for r in tagged.collect():
        members[(r.k, r.window.start, r.window.end, r.window.kind)].append((r.seq, r.v))
    assert {key: [v for _, v in sorted(m)] for key, m in members.items()} == model_count(rows, size, step or size)
    grouped = df.groupBy("k", sw.count(size, step=step, order_by="seq")).agg(F.sum("v").alias("s"))
    assert {(r.k, r.window.start, r.window.end, r.window.kind): r.s for r in grouped.collect()} == {
        key: sum(v for _, v in m) for key, m in members.items()}


def test_select_without_partition_by_is_one_stream(spark):
    df = spark.createDataFrame([(i % 2, i) for i in range(5)], "k int, seq int")
    out = df.select("seq", sw.count(2, order_by="seq")).orderBy("seq", "window")
    assert [(r.seq, r.window.start, r.window.kind) for r in out.collect()] == [
        (0, 0, "final"), (1, 0, "final"), (2, 2, "final"), (3, 2, "final"), (4, 4, "partial")]


def test_null_order_rows_are_skipped_and_counted(spark):
    df = spark.createDataFrame([(1, 10), (None, 20), (2, 30), (3, 40)], "seq int, v int")
    q = df.groupBy(sw.count(2, order_by="seq")).agg(F.sum("v").alias("s"))
    assert sorted((r.window.kind, r.s) for r in q.collect()) == [("final", 40), ("partial", 40)]
    m = sw.window_metrics(q)
    assert (m["rowsWindowed"], m["rowsSkipped"], m["windowsEmitted"]) == (3, 1, 2)


def test_ties_in_order_by_are_an_error(spark):
    df = spark.createDataFrame([("a", 1, 10), ("a", 1, 20), ("b", 1, 5)], "k string, seq int, v int")
    with pytest.raises(Exception, match=r"sw_count: two rows of the same key have order_by `seq` = 1"):
        df.groupBy("k", sw.count(2, order_by="seq")).agg(F.sum("v")).collect()
    # The same order value under different keys is fine.
    ok = df.where("v != 20").groupBy("k", sw.count(2, order_by="seq")).agg(F.sum("v").alias("s"))
    assert sorted((r.k, r.s) for r in ok.collect()) == [("a", 10), ("b", 5)]


def test_order_by_timestamp_and_string_columns(spark):
    df = spark.sql("SELECT * FROM VALUES ('b', TIMESTAMP'2024-01-01 00:00:02'), ('a', TIMESTAMP'2024-01-01 00:00:01'), "
                   "('c', TIMESTAMP'2024-01-01 00:00:03') AS t(name, ts)")
    by_time = df.groupBy(sw.count(2, order_by="ts")).agg(F.collect_list("name").alias("names")).orderBy("window")
    assert [r.names for r in by_time.collect()] == [["a", "b"], ["c"]]
    by_name = df.groupBy(sw.count(3, order_by="name")).agg(F.collect_list("name").alias("names"))
    assert [(r.window.start, r.window.end, r.names) for r in by_name.collect()] == [("a", "c", ["a", "b", "c"])]


def test_count_needs_order_by(spark):
    df = spark.range(3)
    with pytest.raises(AnalysisException, match=r"sw_count: argument `order_by` is required"):
        df.groupBy(sw.count(2)).count().collect()
