"""eKuiper COUNTWINDOW(n, i), KX global split, SPL delta and punct(): seed examples and models."""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pyspark.errors import AnalysisException
from pyspark.sql import Window
from pyspark.sql import functions as F

import streamwin as sw


def windows_of(out, value="vs"):
    return [(r.window.start, r.window.end, r.window.kind, r[value]) for r in out.orderBy("window").collect()]


# ---- eKuiper COUNTWINDOW(n, i): align="end" ---------------------------------------------------

def test_ekuiper_countwindow_5_2_walkthrough(spark):
    # Events 1..9. At event 2 and 4 fewer than 5 events arrived: nothing. At event 6 a window with the
    # latest 5 events (2-6): the 1st event is ignored. Then every 2nd event: 4-8. Event 9 is pending.
    df = spark.range(1, 10).withColumnRenamed("id", "event")
    out = df.groupBy(sw.count(5, step=2, align="end", order_by="event")).agg(F.collect_list("event").alias("vs"))
    assert windows_of(out) == [(2, 6, "final", [2, 3, 4, 5, 6]), (4, 8, "final", [4, 5, 6, 7, 8]),
                               (6, 9, "partial", [6, 7, 8, 9])]
    out.collect()
    m = sw.window_metrics(out)
    assert (m["rowsWindowed"], m["rowsSkipped"]) == (8, 1)  # event 1 is in no window, and counted


def test_ekuiper_countwindow_5_and_5_1(spark):
    df = spark.range(1, 13).withColumnRenamed("id", "event")
    tumbling = df.groupBy(sw.count(5, align="end", order_by="event")).agg(F.collect_list("event").alias("vs"))
    assert windows_of(tumbling) == [(1, 5, "final", [1, 2, 3, 4, 5]), (6, 10, "final", [6, 7, 8, 9, 10]),
                                    (11, 12, "partial", [11, 12])]
    every = df.groupBy(sw.count(5, step=1, align="end", order_by="event")).agg(F.collect_list("event").alias("vs"))
    assert windows_of(every) == [(s, s + 4, "final", list(range(s, s + 5))) for s in range(1, 9)]


# ---- KX global window with a split trigger ------------------------------------------------------

def test_kx_split_on_status_new(spark):
    # The seed's two batches: val 88 89 21 98 0n 24 / 34 28 0n 90 0n 47 with status new at 0n rows.
    vals = [88, 89, 21, 98, None, 24, 34, 28, None, 90, None, 47]
    status = ["running"] * 4 + ["new", "running", "running", "running", "new", "running", "new", "running"]
    df = spark.createDataFrame([(i, v, s) for i, (v, s) in enumerate(zip(vals, status))], "seq int, val int, status string")
    out = df.groupBy(sw.split(F.col("status") == "new", order_by="seq")).agg(
        F.collect_list(F.coalesce("val", F.lit(-1))).alias("vs"))
    # Each window after the first starts with status new; the last stays buffered until teardown.
    assert [(k, v) for _, _, k, v in windows_of(out)] == [
        ("final", [88, 89, 21, 98]), ("final", [-1, 24, 34, 28]), ("final", [-1, 90]), ("partial", [-1, 47])]


def test_kx_high_water_mark_split_as_a_running_max_predicate(spark):
    # KX: initial state 15; a window is emitted whenever a new high-water mark is seen.
    vals = [0, 1, 5, 14, 15, 16, 17, 18, 16, 17, 16]
    df = spark.createDataFrame(list(enumerate(vals)), "seq int, val int")
    earlier_max = F.max("val").over(Window.orderBy("seq").rowsBetween(Window.unboundedPreceding, -1))
    # The stateful trigger becomes a column: is this value above every earlier one (and the initial 15)?
    flagged = df.withColumn("new_high", F.col("val") > F.greatest(F.lit(15), F.coalesce(earlier_max, F.lit(15))))
    out = flagged.groupBy(sw.split("new_high", order_by="seq")).agg(F.collect_list("val").alias("vs"))
    assert [(k, v) for _, _, k, v in windows_of(out)] == [
        ("final", [0, 1, 5, 14, 15]), ("final", [16]), ("final", [17]), ("partial", [18, 16, 17, 16])]
    with pytest.raises(AnalysisException, match=r"sw_split: window functions \(OVER ...\) cannot be used inside sw_split"):
        df.groupBy(sw.split(F.col("val") > earlier_max, order_by="seq")).count().collect()


# ---- SPL delta and punct() ----------------------------------------------------------------------

def test_spl_delta_uses_the_oldest_row(spark):
    # [16.0, 16.4, 17.1] (oldest first) then 17.6: 17.6 - 16.0 > 1.5, the window tumbles and 17.6
    # starts the next one. [16.4, 16.0, 17.1] then 17.6: 17.6 - 16.4 is not > 1.5, no tumble.
    for temps, expected in [
        ([16.0, 16.4, 17.1, 17.6], [("final", [16.0, 16.4, 17.1]), ("partial", [17.6])]),
        ([16.4, 16.0, 17.1, 17.6], [("partial", [16.4, 16.0, 17.1, 17.6])]),
    ]:
        df = spark.createDataFrame(list(enumerate(temps)), "seq int, temp double")
        out = df.groupBy(sw.delta("temp", 1.5, order_by="seq")).agg(F.collect_list("temp").alias("vs"))
        assert [(k, v) for _, _, k, v in windows_of(out)] == expected


def test_spl_delta_on_timestamps_in_seconds(spark):
    t0 = dt.datetime(2024, 1, 1)
    times = [t0 + dt.timedelta(milliseconds=ms) for ms in (0, 1000, 2500, 2600, 5200, 5300)]
    df = spark.createDataFrame([(i, t) for i, t in enumerate(times)], "seq int, ts timestamp")
    out = df.groupBy(sw.delta("ts", 2.5, order_by="seq")).agg(F.collect_list("seq").alias("vs"))
    # 2.5 - 0 is not > 2.5; 2.6 - 0 > 2.5 tumbles; 5.2 - 2.6 > 2.5 tumbles.
    assert [(k, v) for _, _, k, v in windows_of(out)] == [("final", [0, 1, 2]), ("final", [3]), ("partial", [4, 5])]
    ntz = df.withColumn("ts", F.col("ts").cast("timestamp_ntz"))
    out_ntz = ntz.groupBy(sw.delta("ts", 2.5, order_by="seq")).agg(F.collect_list("seq").alias("vs"))
    assert windows_of(out_ntz) == windows_of(out)


def test_spl_punctuation_markers_are_not_members(spark):
    rows = [(1, 5, False), (2, 7, None), (3, None, True), (4, None, True), (5, 1, False), (6, 2, False), (7, 0, True)]
    df = spark.createDataFrame(rows, "seq int, v int, mark boolean")
    out = df.groupBy(sw.punctuation("mark", order_by="seq")).agg(F.collect_list("v").alias("vs"), F.count("*").alias("n"))
    assert [(s, e, k, v) for s, e, k, v in windows_of(out)] == [(1, 2, "final", [5, 7]), (5, 6, "final", [1, 2])]
    assert sorted(r.n for r in out.collect()) == [2, 2]  # markers are not counted as data
    m = sw.window_metrics(out)
    assert (m["rowsWindowed"], m["rowsSkipped"], m["windowsEmitted"]) == (4, 3, 2)


# ---- models on random data ----------------------------------------------------------------------

def model(rows, family, size=None, step=None, threshold=None):
    """{(key, start, end, kind): [values]} for rows of (key, order, signal, value)."""
    by_key = defaultdict(list)
    for k, order, signal, v in rows:
        if order is not None:
            by_key[k].append((order, signal, v))
    out = {}
    for k, items in by_key.items():
        items.sort(key=lambda x: x[0])
        windows = []  # (members, kind)
        if family == "count_end":
            n = len(items)
            for end in range(step, n + 1, step):
                if end >= size:
                    windows.append((items[end - size:end], "final"))
            last = max([e for e in range(step, n + 1, step) if e >= size], default=0)
            if n > last:
                nxt = max(size, (n // step + 1) * step)
                windows.append((items[nxt - size:n], "partial"))
        else:
            current = []
            for item in items:
                order, signal, v = item
                if family == "split":
                    if signal and current:
                        windows.append((current, "final"))
                        current = []
                    current.append(item)
                elif family == "delta":
                    if signal is None:
                        continue
                    if current and signal - current[0][1] > threshold:
                        windows.append((current, "final"))
                        current = []
                    current.append(item)
                elif family == "punct":
                    if signal:
                        if current:
                            windows.append((current, "final"))
                        current = []
                    else:
                        current.append(item)
            if current:
                windows.append((current, "partial"))
        for members, kind in windows:
            out[(k, members[0][0], members[-1][0], kind)] = [v for _, _, v in members]
    return out


def distinct_orders(rows):
    seen, out = set(), []
    for r in rows:
        if r[1] is not None and (r[0], r[1]) in seen:
            continue
        if r[1] is not None:
            seen.add((r[0], r[1]))
        out.append(r)
    return out


def rows_with(signal):
    return st.lists(st.tuples(st.integers(0, 5), st.one_of(st.none(), st.integers(-500, 500)), signal,
                              st.integers(-100, 100)), max_size=150).map(distinct_orders)


FAMILIES = {
    "split": (rows_with(st.one_of(st.none(), st.booleans())), "boolean",
              lambda t: sw.split(F.col("sig"), order_by="seq", **t)),
    "punct": (rows_with(st.one_of(st.none(), st.booleans())), "boolean",
              lambda t: sw.punctuation("sig", order_by="seq", **t)),
    "delta": (rows_with(st.one_of(st.none(), st.integers(-20, 20).map(float))), "double",
              lambda t: sw.delta("sig", 3.0, order_by="seq", **t)),
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_data_windows_match_model_grouped_and_tagged(spark, family):
    strategy, signal_type, window = FAMILIES[family]

    @given(rows=strategy, n=st.integers(1, 6))
    def check(rows, n):
        df = spark.createDataFrame(rows, f"k int, seq int, sig {signal_type}, v int").repartition(n)
        expected = model(rows, family, threshold=3.0)
        grouped = df.groupBy("k", window({})).agg(F.collect_list("v").alias("vs"))
        assert {(r.k, r.window.start, r.window.end, r.window.kind): r.vs for r in grouped.collect()} == expected
        m = sw.window_metrics(grouped)
        assert m["rowsWindowed"] + m["rowsSkipped"] == len(rows)
        assert m["rowsWindowed"] == sum(len(v) for v in expected.values())
        tagged = df.select("k", "seq", "v", window({"partition_by": "k"}))
        members = defaultdict(list)
        for r in tagged.collect():
            members[(r.k, r.window.start, r.window.end, r.window.kind)].append((r.seq, r.v))
        assert {key: [v for _, v in sorted(m)] for key, m in members.items()} == expected

    check()


@given(rows=rows_with(st.just(None)), size=st.integers(1, 6), data=st.data(), n=st.integers(1, 6))
def test_count_end_aligned_matches_model(spark, rows, size, data, n):
    step = data.draw(st.integers(1, size))
    df = spark.createDataFrame(rows, "k int, seq int, sig int, v int").repartition(n)
    out = df.groupBy("k", sw.count(size, step=step, align="end", order_by="seq")).agg(F.collect_list("v").alias("vs"))
    expected = model(rows, "count_end", size=size, step=step)
    assert {(r.k, r.window.start, r.window.end, r.window.kind): r.vs for r in out.collect()} == expected
    m = sw.window_metrics(out)
    assert m["rowsWindowed"] + m["rowsSkipped"] == len(rows)
    tagged = df.select("k", "seq", "v", sw.count(size, step=step, align="end", order_by="seq", partition_by="k"))
    members = defaultdict(list)
    for r in tagged.collect():
        members[(r.k, r.window.start, r.window.end, r.window.kind)].append((r.seq, r.v))
    assert {key: [v for _, v in sorted(m)] for key, m in members.items()} == expected


# ---- bad input ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def df(spark):
    return spark.sql("SELECT 1L AS seq, 2.0 AS v, true AS flag, 'x' AS s, TIMESTAMP'2024-01-01 00:00:00' AS ts")


BAD = [
    ("split predicate not boolean", lambda d: d.groupBy(sw.split("v", order_by="seq")).count(),
     r"sw_split: argument `predicate` must be a BOOLEAN column or condition, got DECIMAL"),
    ("marker not boolean", lambda d: d.groupBy(sw.punctuation("s", order_by="seq")).count(),
     r"sw_punctuation: argument `column` must be a BOOLEAN marker column, got STRING"),
    ("delta on a string", lambda d: d.groupBy(sw.delta("s", 1, order_by="seq")).count(),
     r"sw_delta: argument `column` must be a numeric or timestamp column, got STRING"),
    ("delta on a boolean", lambda d: d.groupBy(sw.delta("flag", 1, order_by="seq")).count(),
     r"sw_delta: argument `column` must be a numeric or timestamp column, got BOOLEAN"),
    ("negative threshold", lambda d: d.groupBy(sw.delta("v", -0.5, order_by="seq")).count(),
     r"sw_delta: argument `threshold` must be a number >= 0"),
    ("threshold not a number", lambda d: d.groupBy(F.call_function("sw_delta", F.col("v"), F.lit("1"), F.lit("order_by"), F.col("seq"))).count(),
     r"sw_delta: argument `threshold` must be a number >= 0"),
    ("split without order", lambda d: d.groupBy(sw.split("flag")).count(), r"sw_split: argument `order_by` is required"),
    ("punctuation without order", lambda d: d.groupBy(sw.punctuation("flag")).count(),
     r"sw_punctuation: argument `order_by` is required"),
    ("unknown align", lambda d: d.groupBy(sw.count(3, align="middle", order_by="seq")).count(),
     r"sw_count: argument `align` must be one of 'start', 'end'"),
    ("end-aligned step above size", lambda d: d.groupBy(sw.count(3, step=5, align="end", order_by="seq")).count(),
     r"sw_count: argument `step` must not exceed size \(5 > 3\)"),
    ("delta option unknown", lambda d: d.groupBy(sw.delta("v", 1, order_by="seq", step=2)).count(),
     r"sw_delta: argument `step` is not an option of sw_delta; allowed options: order_by, partition_by"),
]


@pytest.mark.parametrize("build,pattern", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_data_window_specs(df, build, pattern):
    with pytest.raises(AnalysisException, match=pattern):
        build(df).collect()


def test_python_threshold_type_error():
    with pytest.raises(TypeError, match=r"argument `threshold` must be a number >= 0"):
        sw.delta("v", "1.5", order_by="seq")  # type: ignore[arg-type]


def test_sql_data_windows(spark):
    rows = spark.sql("""
        SELECT sw_split(status = 'new', 'order_by', seq) AS window, count(*) AS n
        FROM VALUES (1, 'run'), (2, 'new'), (3, 'run') AS t(seq, status)
        GROUP BY sw_split(status = 'new', 'order_by', seq) ORDER BY window""").collect()
    assert [(r.window.start, r.window.kind, r.n) for r in rows] == [(1, "final", 1), (2, "partial", 2)]
    rows = spark.sql("""
        SELECT sw_delta(v, 1, order_by => seq) AS window, sum(v) AS s
        FROM VALUES (1, 1.0), (2, 2.0), (3, 2.5) AS t(seq, v)
        GROUP BY sw_delta(v, 1, order_by => seq) ORDER BY window""").collect()
    assert [(r.window.kind, float(r.s)) for r in rows] == [("final", 3.0), ("partial", 2.5)]


def test_ties_in_order_by_are_an_error_for_data_windows(spark):
    df = spark.createDataFrame([(1, 1.0), (1, 9.0), (2, 3.0)], "seq int, v double")
    with pytest.raises(Exception, match=r"sw_delta: two rows of the same key have order_by `seq` = 1"):
        df.groupBy(sw.delta("v", 1, order_by="seq")).count().collect()
