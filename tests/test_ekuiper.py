"""eKuiper's window SQL (seed 001) on Spark SQL through the extension: TUMBLINGWINDOW(ss, 10) and
friends, FILTER (WHERE ...), window_start()/window_end(), with eKuiper's results: the seed's examples
and cases of eKuiper's own window rule tests (internal/topo/topotest/window_rule_test.go, its `demo`
stream)."""

from __future__ import annotations

import random
from collections import Counter, defaultdict

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import streamwin as sw

# eKuiper's topotest `demo` stream: color, size, ts (epoch milliseconds, its TIMESTAMP field).
DEMO = [("red", 3, 1541152486013), ("blue", 6, 1541152486822), ("blue", 2, 1541152487632),
        ("yellow", 4, 1541152488442), ("red", 1, 1541152489252)]


@pytest.fixture()
def ekuiper(spark):
    spark.createDataFrame(DEMO, "color string, size long, ts long").createOrReplaceTempView("demo")
    spark.conf.set("spark.streamwin.ekuiper.timestamp", "ts")
    yield spark
    spark.conf.unset("spark.streamwin.ekuiper.timestamp")
    spark.conf.unset("spark.streamwin.ekuiper.order")


def _windows_of_rows(rows, *columns):
    """{window start ms: [tuple of columns per row, in ts order]} of a query that outputs window rows."""
    out = defaultdict(list)
    for r in sorted(rows, key=lambda r: r.ts):
        out[int(r.window.start.timestamp() * 1000)].append(tuple(r[c] for c in columns))
    return dict(out)


def test_window_rule_1_hopping_outputs_each_windows_rows(ekuiper):
    # TestWindowRule1: SELECT * FROM demo GROUP BY HOPPINGWINDOW(ss, 2, 1)
    got = _windows_of_rows(ekuiper.sql("SELECT * FROM demo GROUP BY HOPPINGWINDOW(ss, 2, 1)").collect(), "color", "ts")
    ekuiper_result = [
        [("red", 1541152486013), ("blue", 1541152486822)],
        [("red", 1541152486013), ("blue", 1541152486822), ("blue", 1541152487632)],
        [("blue", 1541152487632), ("yellow", 1541152488442)],
        [("yellow", 1541152488442), ("red", 1541152489252)],
    ]
    assert [got[start] for start in sorted(got)][:4] == ekuiper_result
    # eKuiper's test stops its clock at the last event; a batch DataFrame is a finished stream, whose
    # last window [489 s, 491 s) closes too.
    assert got[sorted(got)[4]] == [("red", 1541152489252)] and len(got) == 5


def test_window_rule_2_where_then_tumbling_rows(ekuiper):
    # TestWindowRule2: SELECT color, ts FROM demo where size > 2 GROUP BY tumblingwindow(ss, 1)
    rows = ekuiper.sql("SELECT color, ts, window FROM demo where size > 2 GROUP BY tumblingwindow(ss, 1)").collect()
    got = _windows_of_rows(rows, "color", "ts")
    # eKuiper also emits the two empty windows between them as empty lists; Spark outputs rows only.
    assert [got[s] for s in sorted(got)] == [[("red", 1541152486013), ("blue", 1541152486822)],
                                             [("yellow", 1541152488442)]]


def test_window_rule_8_aggregates_bounds_and_having(ekuiper):
    # TestWindowRule8 (without event_time()): plain columns outside GROUP BY are the first row's.
    rows = ekuiper.sql(
        "SELECT color, window_end(), ts, count(*) as c, window_start() FROM demo where size > 2 "
        "GROUP BY tumblingwindow(ss, 1) having c > 1").collect()
    assert [r.asDict() for r in rows] == [{"color": "red", "window_end": 1541152487000, "ts": 1541152486013, "c": 2,
                                           "window_start": 1541152486000}]


def _readings(spark, n=40, seed=1):
    rng = random.Random(seed)
    start = 1_700_000_000_000
    rows = [(f"d{rng.randint(1, 3)}", start + i * 700 + rng.randint(0, 300), rng.randint(10, 30)) for i in range(n)]
    df = spark.createDataFrame(rows, "ID string, ts long, temperature long")
    df.createOrReplaceTempView("readings")
    return rows, df


def test_seed_tumbling_per_id_with_window_bounds(ekuiper):
    _, df = _readings(ekuiper)
    got = ekuiper.sql("SELECT ID, count(*) AS n, window_start(), window_end() FROM readings "
                      "GROUP BY ID, TUMBLINGWINDOW(ss, 10)").collect()
    expected = df.groupBy("ID", sw.tumbling(F.timestamp_millis("ts"), "10 seconds")).agg(F.count("*").alias("n"))
    assert sorted((r.ID, r.n, r.window_start, r.window_end) for r in got) == sorted(
        (r.ID, r.n, int(r.window.start.timestamp() * 1000), int(r.window.end.timestamp() * 1000))
        for r in expected.collect())


def test_hopping_units_in_any_case(ekuiper):
    _readings(ekuiper)
    seconds = ekuiper.sql("SELECT ID, count(*) AS n, window_start() AS ws FROM readings "
                          "GROUP BY ID, HOPPINGWINDOW(ss, 10, 5)").collect()
    millis = ekuiper.sql("SELECT ID, count(*) AS n, window_start() AS ws FROM readings "
                         "GROUP BY ID, hoppingwindow(Ms, 10000, 5000)").collect()
    minutes = ekuiper.sql("SELECT count(*) AS n FROM readings GROUP BY HoppingWindow(MI, 1, 1)").collect()
    assert sorted(seconds) == sorted(millis) and len(seconds) > 5
    assert sum(r.n for r in minutes) == 40


def test_minutes_written_mm_as_in_ekuipers_examples(ekuiper):
    # eKuiper's unit list says MI; its own window examples write SLIDINGWINDOW(mm, 1) and SESSIONWINDOW(mm, 2, 1).
    _readings(ekuiper)
    for window in ("SLIDINGWINDOW({}, 1)", "SESSIONWINDOW({}, 2, 1)", "TUMBLINGWINDOW({}, 1)"):
        def counts(unit: str) -> list:
            return sorted(ekuiper.sql(f"SELECT count(*) AS n, window_start() AS ws FROM readings "
                                      f"GROUP BY {window.format(unit)}").collect())
        assert counts("mm") == counts("mi") == counts("MM") and counts("mm"), window


def _count_model(rows, size, interval=None):
    """eKuiper's COUNTWINDOW over the whole stream in arrival (ts) order: complete windows only."""
    ordered = sorted(rows, key=lambda r: r[1])
    if interval is None:
        return [ordered[i:i + size] for i in range(0, len(ordered) - size + 1, size)]
    return [ordered[n - size:n] for n in range(1, len(ordered) + 1) if n % interval == 0 and n >= size]


def test_seed_count_window_where_applies_within_each_window(ekuiper):
    # SELECT * FROM demo WHERE temperature > 20 GROUP BY COUNTWINDOW(5): 5 events, then the WHERE.
    rows, _ = _readings(ekuiper)
    got = ekuiper.sql("SELECT * FROM readings WHERE temperature > 20 GROUP BY COUNTWINDOW(5)").collect()
    by_window = defaultdict(list)
    for r in got:
        by_window[r.window.start].append((r.ID, r.ts, r.temperature))
    expected = [[r for r in w if r[2] > 20] for w in _count_model(rows, 5)]
    assert sorted(sorted(v) for v in by_window.values()) == sorted(sorted(w) for w in expected if w)


def test_seed_count_window_with_interval_and_having(ekuiper):
    # SELECT * FROM demo WHERE temperature > 20 GROUP BY COUNTWINDOW(5,1) HAVING COUNT(*) > 2
    rows, _ = _readings(ekuiper)
    got = ekuiper.sql("SELECT ID, ts, temperature, window FROM readings WHERE temperature > 20 "
                      "GROUP BY COUNTWINDOW(5,1) HAVING COUNT(*) > 2").collect()
    by_window = defaultdict(list)
    for r in got:
        by_window[(r.window.start, r.window.end)].append((r.ID, r.ts, r.temperature))
    expected = [kept for kept in ([r for r in w if r[2] > 20] for w in _count_model(rows, 5, 1)) if len(kept) > 2]
    assert sorted(sorted(v) for v in by_window.values()) == sorted(sorted(w) for w in expected)
    assert all(len(v) > 2 for v in by_window.values())
    # The seed's own form, SELECT *: the stream's columns and the window, nothing HAVING computed.
    star = ekuiper.sql("SELECT * FROM readings WHERE temperature > 20 GROUP BY COUNTWINDOW(5,1) HAVING COUNT(*) > 2")
    assert star.columns == ["ID", "ts", "temperature", "window"]
    assert sorted(star.collect()) == sorted(got)


def test_filter_clause_feeds_windows_where_filters_them(ekuiper):
    # FILTER runs before the window: a count window still holds `size` rows; WHERE filters its rows after.
    filtered = ekuiper.sql("SELECT count(*) AS c FROM demo GROUP BY COUNTWINDOW(3) FILTER (WHERE size > 2)").collect()
    where = ekuiper.sql("SELECT count(*) AS c FROM demo WHERE size > 2 GROUP BY COUNTWINDOW(3)").collect()
    assert [r.c for r in filtered] == [3]  # red 3, blue 6, yellow 4
    assert [r.c for r in where] == [2]  # the window red 3, blue 6, blue 2, then WHERE


def test_count_window_groups_within_the_window(ekuiper):
    # eKuiper rule: GROUP BY COUNTWINDOW(5), color counts 5 rows of the stream, then groups them by color.
    got = ekuiper.sql("SELECT color, count(*) AS c FROM demo GROUP BY COUNTWINDOW(5), color").collect()
    assert sorted((r.color, r.c) for r in got) == [("blue", 2), ("red", 2), ("yellow", 1)]


def test_sliding_and_session_windows_span_the_whole_stream(ekuiper):
    rows, df = _readings(ekuiper)
    stream_wide = df.withColumn("t", F.timestamp_millis("ts"))
    sliding = ekuiper.sql("SELECT ID, count(*) AS n, window_end() AS we FROM readings GROUP BY SLIDINGWINDOW(ss, 3), ID")
    tagged = stream_wide.select("ID", sw.sliding("t", "3 seconds"))
    expected = tagged.groupBy("window", "ID").agg(F.count("*").alias("n"))
    assert sorted((r.ID, r.n, r.we) for r in sliding.collect()) == sorted(
        (r.ID, r.n, int(r.window.end.timestamp() * 1000)) for r in expected.collect())
    session = ekuiper.sql("SELECT count(*) AS n, window_start() AS ws, window_end() AS we FROM readings "
                          "GROUP BY SESSIONWINDOW(ss, 10, 1)")
    sessions = stream_wide.groupBy(sw.session("t", "1 second", max_duration="10 seconds")).agg(F.count("*").alias("n"))
    assert sorted((r.n, r.ws, r.we) for r in session.collect()) == sorted(
        (r.n, int(r.window.start.timestamp() * 1000), int(r.window.end.timestamp() * 1000)) for r in sessions.collect())


# eKuiper's event-time topotest streams (TIMESTAMP="ts", late tolerance 1 s). demoE's row blue 6 at
# 486822 arrives after the watermark passed it, so eKuiper drops it; it is left out here.
DEMO_E = [("red", 3, 1541152486013), ("blue", 2, 1541152487632), ("red", 1, 1541152489252),
          ("yellow", 4, 1541152488442), ("yellow", 4, 1541152492342)]
DEMO_E2 = [(27.5, 59, 1541152486000), (25.5, 65, 1541152487000), (25.5, 65, 1541152488000)]


@pytest.fixture()
def event_streams(ekuiper):
    ekuiper.createDataFrame(DEMO_E, "color string, size long, ts long").createOrReplaceTempView("demoE")
    ekuiper.createDataFrame(DEMO_E2, "temp double, hum long, ts long").createOrReplaceTempView("demoE2")
    return ekuiper


def _by_window(rows, column):
    """[(window start ms, window end ms, [column of each row, in ts order])] by window start."""
    out = defaultdict(list)
    for r in sorted(rows, key=lambda r: r.ts):
        out[(int(r.window.start.timestamp() * 1000), int(r.window.end.timestamp() * 1000))].append(r[column])
    return [(start, end, values) for (start, end), values in sorted(out.items())]


def test_event_window_delay_rule_0_sliding_delay_after_filter(event_streams):
    # TestEventWindowDelayRule0: SlidingWindow(ss, 1, 4) FILTER (where color = "red"): the window of the
    # red row at 486013 takes [485013, 490013), which holds both red rows: eKuiper's [[{size 3}, {size 1}]].
    # The window of the red row at 489252 is still open when eKuiper's test ends (no later watermark); a
    # batch is a finished stream, so it closes too.
    rows = event_streams.sql('SELECT size, ts, window FROM demoE GROUP BY SlidingWindow(ss, 1, 4) '
                             'FILTER (where color = "red")').collect()
    assert _by_window(rows, "size") == [(1541152485013, 1541152490013, [3, 1]), (1541152488252, 1541152493252, [1])]
    bounds = event_streams.sql('SELECT count(*) AS c, window_start() AS ws, window_end() AS we FROM demoE '
                               'GROUP BY SlidingWindow(ss, 1, 4) FILTER (where color = "red")').collect()
    assert sorted((r.c, r.ws, r.we) for r in bounds) == [(1, 1541152488252, 1541152493252),
                                                         (2, 1541152485013, 1541152490013)]


def test_event_window_rule_delay_sliding_delay_one_row(event_streams):
    # TestEventWindowRuleDelay: SlidingWindow(ss, 1, 1) FILTER (where size = 3) gives [[{color red}]].
    rows = event_streams.sql("SELECT color, ts, window FROM demoE GROUP BY SlidingWindow(ss, 1, 1) "
                             "FILTER (where size = 3)").collect()
    assert _by_window(rows, "color") == [(1541152485013, 1541152487013, ["red"])]


def test_sliding_window_interval_11_delay_excludes_the_row_at_its_end(event_streams):
    # TestSlidingWindowInterval11: SLIDINGWINDOW(ss, 1, 1) over demoE2 (486000, 487000, 488000): the
    # window of 486000 is [485000, 487000), without the row at 487000: eKuiper's [[{temp 27.5}]]. eKuiper's
    # test ends before the other two windows are due; here they close with the batch.
    rows = event_streams.sql("SELECT temp, ts, window FROM demoE2 GROUP BY SLIDINGWINDOW(ss, 1, 1)").collect()
    assert _by_window(rows, "temp") == [(1541152485000, 1541152487000, [27.5]),
                                        (1541152486000, 1541152488000, [27.5, 25.5]),
                                        (1541152487000, 1541152489000, [25.5, 25.5])]
    # TestSlidingWindowInterval12, without a delay: both ends in, [[{27.5}], [{27.5}, {25.5}], ...].
    plain = event_streams.sql("SELECT temp, ts, window FROM demoE2 GROUP BY SLIDINGWINDOW(ss, 1)").collect()
    assert [values for _, _, values in _by_window(plain, "temp")][:2] == [[27.5], [27.5, 25.5]]


def test_window_rule_0_sliding_over_when_after_filter(ekuiper):
    # TestWindowRule0: FILTER keeps the red rows; of those, only size 1 (at 489252) opens a window, which
    # takes the red rows of the 5 s before it: [[{size 3, red}, {size 1, red}]].
    rows = ekuiper.sql('SELECT size, color, ts, window FROM demo GROUP BY SlidingWindow(ss, 5) '
                       'Filter (where color = "red") Over (when size = 1)').collect()
    assert [(values, [r.color for r in rows]) for _, _, values in _by_window(rows, "size")] == [([3, 1], ["red", "red"])]
    assert _by_window(rows, "size")[0][:2] == (1541152484252, 1541152489252)


def test_window_rule_4_last_hit_time_in_the_condition(ekuiper):
    # TestWindowRule4: a row opens a window when more than 1 s passed since the last row that did
    # (last_hit_time() is 0 before any): 486013, 487632 and 489252, each grouped by color.
    got = ekuiper.sql("SELECT color, count(*) as c, window_start() AS ws, window_end() AS we FROM demo "
                      "GROUP BY SlidingWindow(ss, 2) OVER(WHEN ts - last_hit_time() > 1000) , color ORDER BY color").collect()
    by_window = defaultdict(list)
    for r in got:
        by_window[(r.ws, r.we)].append((r.color, r.c))
    assert sorted((we, sorted(groups)) for (ws, we), groups in by_window.items() if we - ws == 2000) == [
        (1541152486013, [("red", 1)]),
        (1541152487632, [("blue", 2), ("red", 1)]),
        (1541152489252, [("blue", 1), ("red", 1), ("yellow", 1)])]
    assert len(by_window) == 3


def test_sliding_delay_over_when(ekuiper):
    # TestSlidingDelay: SlidingWindow(ss, 5, 1) Over (when size = 2): the window of blue 2 at 487632 is
    # [482632, 488632): [[3, 6, 2, 4]].
    rows = ekuiper.sql("SELECT size, color, ts, window FROM demo GROUP BY SlidingWindow(ss, 5, 1) "
                       "Over (when size = 2)").collect()
    assert _by_window(rows, "size") == [(1541152482632, 1541152488632, [3, 6, 2, 4])]


def test_event_window_rule_4_last_hit_time_in_event_time(event_streams):
    # TestEventWindowRule4 on demoE, in event-time order (yellow 488442 before red 489252): windows at
    # 486013, 487632 and 489252 as eKuiper outputs them. The window of yellow 492342 is still open when
    # eKuiper's test ends; a batch is a finished stream, so it closes too.
    got = event_streams.sql("SELECT window_start() as ws, color, window_end() as we FROM demoE GROUP BY "
                            "SlidingWindow(ss, 2) OVER (WHEN ts - last_hit_time() > 1000), color ORDER BY color").collect()
    assert sorted((r.ws, r.we, r.color) for r in got) == [
        (1541152484013, 1541152486013, "red"),
        (1541152485632, 1541152487632, "blue"), (1541152485632, 1541152487632, "red"),
        (1541152487252, 1541152489252, "blue"), (1541152487252, 1541152489252, "red"),
        (1541152487252, 1541152489252, "yellow"),
        (1541152490342, 1541152492342, "yellow")]


def test_event_window_condition_10(event_streams):
    # TestEventWindowCondition10: SlidingWindow(ss, 1) Over (When size = 3) gives [[{color red}]].
    rows = event_streams.sql("SELECT color, ts, window FROM demoE GROUP BY SlidingWindow(ss, 1) "
                             "Over (When size = 3)").collect()
    assert _by_window(rows, "color") == [(1541152485013, 1541152486013, ["red"])]


def test_last_hit_count_and_the_condition_text(ekuiper):
    # last_hit_count(): how many rows matched before this one. Comments, quotes and parentheses in
    # and around the clause are read past; named parameters work in the condition.
    got = ekuiper.sql("SELECT collect_list(size) AS sizes, window_end() AS we FROM demo GROUP BY SLIDINGWINDOW(ss, 1) "
                      "/* a ( comment */ OVER ( -- another )\n WHEN (size > 2 AND color <> ')') "
                      "AND last_hit_count() < :most)", args={"most": 2}).collect()
    assert sorted((r.we, r.sizes) for r in got) == [(1541152486013, [3]), (1541152486822, [3, 6])]
    with pytest.raises(AnalysisException, match=r"positional parameters \(\?\) in both FILTER and OVER"):
        ekuiper.sql("SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 1) FILTER (WHERE size > ?) "
                    "OVER (WHEN size > ?)", args=[1, 2]).collect()


def test_sliding_zero_size_with_delay_collects_what_follows(ekuiper):
    # eKuiper's change-data-capture example: SLIDINGWINDOW(ss, 0, 10), the 10 s after each event.
    got = ekuiper.sql("SELECT count(*) AS c, window_start() AS ws, window_end() AS we FROM demo "
                      "GROUP BY SLIDINGWINDOW(ss, 0, 2)").collect()
    times = [ts for _, _, ts in DEMO]
    assert sorted((r.ws, r.we, r.c) for r in got) == [(t, t + 2000, sum(t <= u < t + 2000 for u in times)) for t in times]
    zero = ekuiper.sql("SELECT count(*) AS c FROM demo GROUP BY SLIDINGWINDOW(ss, 3, 0)").collect()
    assert sorted(r.c for r in zero) == sorted(r.c for r in ekuiper.sql(
        "SELECT count(*) AS c FROM demo GROUP BY SLIDINGWINDOW(ss, 3)").collect())


def test_where_filters_a_sliding_windows_rows_after_the_window(ekuiper):
    # eKuiper keeps WHERE above sliding (and count) windows (WindowPlan.PushDownPredicate): every row
    # opens its window, then WHERE filters each window's rows; a window with none left is not output.
    rows = ekuiper.sql("SELECT color, size, ts, window FROM demo WHERE size > 2 GROUP BY SLIDINGWINDOW(ss, 1)").collect()
    assert [values for _, _, values in _by_window(rows, "size")] == [[3], [3, 6], [6], [4], [4]]
    assert ekuiper.sql("SELECT count(*) AS c FROM demo WHERE size > 5 GROUP BY SLIDINGWINDOW(ss, 1)").count() == 2


def test_timestamp_columns_and_the_session_time_zone(ekuiper):
    # A TIMESTAMP event-time column works too; hourly windows start at the hour of the session's zone.
    ekuiper.createDataFrame([("a", 1_700_000_000_000), ("a", 1_700_003_000_000)], "ID string, ms long") \
        .select("ID", F.timestamp_millis("ms").alias("at")).createOrReplaceTempView("stamped")
    ekuiper.conf.set("spark.streamwin.ekuiper.timestamp", "at")
    try:
        ekuiper.conf.set("spark.sql.session.timeZone", "Asia/Kolkata")  # UTC+05:30
        rows = ekuiper.sql("SELECT count(*) AS n, window_start() AS ws FROM stamped GROUP BY TUMBLINGWINDOW(hh, 1)").collect()
        assert sorted(r.ws % 3_600_000 for r in rows) == [1_800_000, 1_800_000]  # :30 UTC is the hour in Kolkata
    finally:
        ekuiper.conf.set("spark.sql.session.timeZone", "UTC")


@pytest.mark.parametrize("sql,message", [
    ("SELECT count(*) FROM demo GROUP BY TUMBLINGWINDOW(mo, 10)", "TUMBLINGWINDOW: argument `unit` must be a time unit"),
    ("SELECT count(*) FROM demo GROUP BY TUMBLINGWINDOW(ss)", "TUMBLINGWINDOW: takes 2 argument"),
    ("SELECT count(*) FROM demo GROUP BY HOPPINGWINDOW(ss, 10)", "HOPPINGWINDOW: takes 3 argument"),
    ("SELECT count(*) FROM demo GROUP BY SESSIONWINDOW(ss, 10)", "SESSIONWINDOW: takes 3 argument"),
    ("SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 1, 2, 3)", "SLIDINGWINDOW: takes 2 or 3 argument"),
    ("SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 0)", "SLIDINGWINDOW: argument `size` must be a positive integer"),
    ("SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 2, -1)",
     "SLIDINGWINDOW: argument `delay` must be a non-negative integer"),
    ("SELECT count(*) FROM demo GROUP BY COUNTWINDOW(5, 1, 2)", "COUNTWINDOW: takes 1 or 2 argument"),
    ("SELECT count(*) FROM demo GROUP BY COUNTWINDOW(0)", "COUNTWINDOW: argument `size` must be a positive integer"),
    ("SELECT window_start() FROM demo", r"window_start\(\): is only available in a windowed query"),
    ("SELECT color, window_end() FROM demo GROUP BY color", r"window_end\(\): is only available in a windowed query"),
    ("SELECT TUMBLINGWINDOW(ss, 10) FROM demo", "TUMBLINGWINDOW: an eKuiper window belongs in GROUP BY"),
    ("SELECT count(*) FROM demo GROUP BY COUNTWINDOW(3) FILTER size > 2", "COUNTWINDOW: FILTER takes a WHERE clause"),
    ("SELECT count(*) FROM demo GROUP BY tumblingwindow(ss, 1) filter (size > 2)",
     "TUMBLINGWINDOW: FILTER takes a WHERE clause"),
    ("SELECT count(*) FROM demo GROUP BY TUMBLINGWINDOW(ss, 2) OVER (WHEN size > 2)",
     r"TUMBLINGWINDOW: OVER \(WHEN condition\) triggers sliding windows only"),
    ("SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN  )",
     r"SLIDINGWINDOW: OVER \(WHEN condition\) needs a condition"),
    ("SELECT last_hit_time() AS t FROM demo", r"last_hit_time\(\): is only available in the condition of a sliding window"),
    ("SELECT count(*), last_hit_count() FROM demo GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN size > 2)",
     r"last_hit_count\(\): is only available in the condition of a sliding window"),
    ("SELECT count(*) FROM demo GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN size)",
     r"sw_sliding: argument `when` must be a BOOLEAN condition"),
])
def test_clear_errors_name_the_ekuiper_function(ekuiper, sql, message):
    with pytest.raises(AnalysisException, match=message):
        ekuiper.sql(sql).collect()


def test_without_the_timestamp_conf_a_clear_error(ekuiper):
    ekuiper.conf.unset("spark.streamwin.ekuiper.timestamp")
    with pytest.raises(AnalysisException, match="set the session conf spark.streamwin.ekuiper.timestamp"):
        ekuiper.sql("SELECT count(*) FROM demo GROUP BY TUMBLINGWINDOW(ss, 10)").collect()


def test_tumbling_in_a_stream_equals_the_batch(ekuiper, tmp_path):
    rows, df = _readings(ekuiper, n=60, seed=3)
    folder = tmp_path / "in"
    df.withColumn("at", F.timestamp_millis("ts")).write.json(str(folder))
    ekuiper.conf.set("spark.streamwin.ekuiper.timestamp", "at")
    schema = "ID string, ts long, temperature long, at timestamp"
    ekuiper.readStream.schema(schema).json(str(folder)).withWatermark("at", "1 second") \
        .createOrReplaceTempView("readings_stream")
    ekuiper.read.schema(schema).json(str(folder)).createOrReplaceTempView("readings_batch")
    query_text = "SELECT ID, count(*) AS n, window_start() AS ws FROM {} GROUP BY ID, TUMBLINGWINDOW(ss, 10)"
    query = ekuiper.sql(query_text.format("readings_stream")).writeStream.format("memory") \
        .queryName("ekuiper_stream").outputMode("append").option("checkpointLocation", str(tmp_path / "cp")).start()
    query.processAllAvailable()
    query.stop()
    streamed = sorted(ekuiper.table("ekuiper_stream").collect())
    batch = sorted(ekuiper.sql(query_text.format("readings_batch")).collect())
    last = max(r.ws for r in batch)
    # Windows the watermark has not passed yet (the last one) are still open in the stream.
    assert streamed == [r for r in batch if r.ws < last]


STREAM_CASES = [
    # TestWindowRule1 and TestWindowRule2 on the readings: each window's rows.
    ("hopping rows", "SELECT * FROM {} GROUP BY HOPPINGWINDOW(ss, 2, 1)"),
    ("where then tumbling rows", "SELECT ID, ts, window FROM {} WHERE temperature > 20 GROUP BY TUMBLINGWINDOW(ss, 1)"),
    ("seed count rows", "SELECT * FROM {} WHERE temperature > 20 GROUP BY COUNTWINDOW(5)"),
    ("sliding per ID", "SELECT ID, count(*) AS n, window FROM {} GROUP BY SLIDINGWINDOW(ss, 3), ID"),
    # Count windows over the whole stream, grouped (the seed's COUNTWINDOW(5, 2) and COUNTWINDOW(5) with
    # aggregates): the tagged rows' window column carries the event time's watermark, so Spark's aggregate
    # above streamwin's operator runs in append mode.
    ("count aggregates", "SELECT count(*) AS n, sort_array(collect_list(temperature)) AS t, window FROM {} GROUP BY COUNTWINDOW(5, 2)"),
    ("count per ID", "SELECT ID, count(*) AS n, max(temperature) AS m, window FROM {} GROUP BY COUNTWINDOW(5), ID"),
    ("session", "SELECT count(*) AS n, window_start() AS ws, window FROM {} GROUP BY SESSIONWINDOW(ss, 5, 1)"),
    ("hopping bounds", "SELECT ID, count(*) AS n, window_start() AS ws, window_end() AS we, window "
                       "FROM {} GROUP BY ID, HOPPINGWINDOW(ss, 4, 2)"),
    # The last hit is kept across micro-batches in the stream's state.
    ("sliding last hit", "SELECT count(*) AS n, window FROM {} GROUP BY SLIDINGWINDOW(ss, 3) "
                         "OVER (WHEN ts - last_hit_time() > 2500 AND last_hit_count() < 8)"),
]


@pytest.mark.parametrize("name,query_text", STREAM_CASES, ids=[c[0] for c in STREAM_CASES])
def test_ekuiper_rules_in_a_stream_give_the_batch_result(ekuiper, tmp_path, name, query_text):
    rows, df = _readings(ekuiper, n=40, seed=5)
    folder = tmp_path / "in"
    stamped = df.withColumn("at", F.timestamp_millis("ts")).orderBy("ts")
    stamped.createOrReplaceTempView("readings_batch")
    # Three micro-batches in event-time order, as an eKuiper source delivers them.
    cuts = sorted(r[1] for r in rows)[::len(rows) // 3][1:3]
    for i, (lo, hi) in enumerate(zip([0] + cuts, cuts + [2 ** 62])):
        stamped.where((F.col("ts") >= lo) & (F.col("ts") < hi)).coalesce(1).write.json(str(folder / f"batch={i}"))
    schema = "ID string, ts long, temperature long, at timestamp"
    ekuiper.conf.set("spark.streamwin.ekuiper.timestamp", "at")
    stream = ekuiper.readStream.schema(schema).option("maxFilesPerTrigger", 1).option("recursiveFileLookup", "true") \
        .json(str(folder)).withWatermark("at", "0 seconds")
    stream.createOrReplaceTempView("readings_stream")
    query = ekuiper.sql(query_text.format("readings_stream")).writeStream.format("memory") \
        .queryName("ekuiper_" + name.replace(" ", "_")).outputMode("append") \
        .option("checkpointLocation", str(tmp_path / "cp")).start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    streamed = ekuiper.table("ekuiper_" + name.replace(" ", "_")).collect()
    batch = ekuiper.sql(query_text.format("readings_batch")).collect()
    last = max(r[1] for r in rows)
    # A time window the final watermark (the last event time) has not passed is still open in the
    # stream; a sliding window's end is its last row's time (inclusive), so it waits for a later one.
    # A count window outputs when its last row arrives.
    def closed_in_stream(r) -> bool:
        end = int(r.window.end.timestamp() * 1000)
        return end < last or (end == last and "SLIDINGWINDOW" not in query_text)

    closed = [r for r in batch if "COUNTWINDOW" in query_text or closed_in_stream(r)]
    missing, extra = Counter(map(repr, closed)) - Counter(map(repr, streamed)), Counter(map(repr, streamed)) - Counter(
        map(repr, closed))
    assert not missing and not extra, f"the stream lacks {sorted(missing)} and adds {sorted(extra)}"
    assert len(streamed) >= 2


def test_the_parser_passes_other_statements_through_unchanged(ekuiper):
    # Parameter markers, and Spark's own syntax errors, are Spark's as before.
    assert ekuiper.sql("SELECT count(*) AS n FROM demo WHERE size > :least", args={"least": 2}).first().n == 3
    with pytest.raises(Exception, match="PARSE_SYNTAX_ERROR"):
        ekuiper.sql("SELEC count(*) FROM demo")


def test_windows_in_with_clauses_subqueries_and_explain(ekuiper):
    # eKuiper SQL nested where Spark keeps a plan outside the query's operators (a WITH clause's query, a
    # subquery expression, EXPLAIN's query): each is rewritten as the top-level query is.
    query = "SELECT window_start() AS start, count(*) AS c FROM demo GROUP BY TUMBLINGWINDOW(ss, 2)"
    direct = sorted(tuple(r) for r in ekuiper.sql(query).collect())
    assert direct == [(1541152486000, 3), (1541152488000, 2)]
    assert sorted(tuple(r) for r in ekuiper.sql(f"WITH w AS ({query}) SELECT * FROM w").collect()) == direct
    assert ekuiper.sql(f"SELECT max(c) AS m FROM ({query})").collect()[0].m == 3
    assert ekuiper.sql(f"SELECT (SELECT max(c) FROM ({query})) AS m").collect()[0].m == 3
    assert ekuiper.sql(f"SELECT count(*) AS n FROM demo WHERE size IN (SELECT c FROM ({query}))").collect()[0].n == 2
    plan = ekuiper.sql(f"EXPLAIN {query}").collect()[0][0]
    assert "sw_tumbling" in plan.lower() or "tumbling" in plan.lower(), plan
    assert "error" not in plan.lower(), plan
