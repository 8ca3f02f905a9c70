"""Bad specifications fail at analysis with an AnalysisException naming the argument and what is allowed."""

from __future__ import annotations

import datetime as dt

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql import functions as F

import streamwin as sw


@pytest.fixture(scope="module")
def df(spark):
    return spark.sql("SELECT 'a' AS k, TIMESTAMP'2024-01-01 00:00:00' AS ts, 1L AS seq, 2.0 AS v, "
                     "true AS flag, array(1) AS arr, 'x' AS s")


# (description, how to build the failing query from df, regex the message must match)
CASES = [
    ("zero size", lambda d: d.groupBy(sw.tumbling("ts", "0 seconds")).count(),
     r"sw_tumbling: argument `size` must be positive"),
    ("negative size", lambda d: d.groupBy(sw.tumbling("ts", "-5 seconds")).count(),
     r"sw_tumbling: argument `size` must be positive"),
    ("unparsable size", lambda d: d.groupBy(sw.tumbling("ts", "ten seconds")).count(),
     r"sw_tumbling: argument `size` must be a duration such as '10 seconds'.*cannot parse 'ten seconds'"),
    ("months are not fixed", lambda d: d.groupBy(sw.tumbling("ts", "1 month")).count(),
     r"sw_tumbling: argument `size` must be a fixed duration; months and years vary"),
    ("fractional size", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit(1.5))).count(),
     r"sw_tumbling: argument `size` must be a duration"),
    ("numeric lateness", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit(10),
                                                             F.lit("lateness"), F.lit(5))).count(),
     r"sw_tumbling: argument `lateness` must be a duration"),
    ("null size", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit(None))).count(),
     r"sw_tumbling: argument `size` must be a duration.*not NULL"),
    ("size from a column", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.col("s"))).count(),
     r"sw_tumbling: argument `size` must be a duration"),
    ("string time column", lambda d: d.groupBy(sw.tumbling("s", "1 second")).count(),
     r"sw_tumbling: argument `time` must be a TIMESTAMP or TIMESTAMP_NTZ column, got STRING"),
    ("numeric time column", lambda d: d.groupBy(sw.hopping("seq", "2 seconds", "1 second")).count(),
     r"sw_hopping: argument `time` must be a TIMESTAMP or TIMESTAMP_NTZ column, got BIGINT"),
    ("zero step", lambda d: d.groupBy(sw.hopping("ts", "10 seconds", "0 seconds")).count(),
     r"sw_hopping: argument `step` must be positive"),
    ("bad offset", lambda d: d.groupBy(sw.tumbling("ts", "10 seconds", offset="soon")).count(),
     r"sw_tumbling: argument `offset` must be a duration"),
    ("unknown option", lambda d: d.groupBy(sw.tumbling("ts", "10 seconds", latenes="1 second")).count(),
     r"sw_tumbling: argument `latenes` is not an option of sw_tumbling; allowed options: offset"),
    ("missing step", lambda d: d.groupBy(F.call_function("sw_hopping", F.col("ts"), F.lit("1 second"))).count(),
     r"sw_hopping: missing required argument `step`"),
    ("odd option list", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit("offset"))).count(),
     r"sw_tumbling: options must come as pairs of a name and a value"),
    ("option name not a string", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit(1), F.lit(2))).count(),
     r"sw_tumbling: expected an option name \(a string literal\)"),
    ("option twice", lambda d: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit("offset"), F.lit("1 second"), F.lit("offset"), F.lit("2 seconds"))).count(),
     r"sw_tumbling: argument `offset` is given more than once"),
    ("count size zero", lambda d: d.groupBy(sw.count(0, order_by="seq")).count(),
     r"sw_count: argument `size` must be a positive whole number of rows, got 0"),
    ("count size negative", lambda d: d.groupBy(sw.count(-3, order_by="seq")).count(),
     r"sw_count: argument `size` must be a positive whole number of rows, got -3"),
    ("count size fractional", lambda d: d.groupBy(F.call_function("sw_count", F.lit(2.5), F.lit("order_by"), F.col("seq"))).count(),
     r"sw_count: argument `size` must be a positive whole number of rows"),
    ("count step zero", lambda d: d.groupBy(sw.count(3, step=0, order_by="seq")).count(),
     r"sw_count: argument `step` must be a positive whole number of rows, got 0"),
    ("count step above size", lambda d: d.groupBy(sw.count(3, step=4, order_by="seq")).count(),
     r"sw_count: argument `step` must not exceed size \(4 > 3\)"),
    ("count without order", lambda d: d.groupBy(sw.count(3)).count(),
     r"sw_count: argument `order_by` is required"),
    ("count ordered by an array", lambda d: d.groupBy(sw.count(3, order_by="arr")).count(),
     r"sw_count: argument `order_by` must be a numeric, string, date or timestamp column, got ARRAY<INT>"),
    ("partition_by in groupBy", lambda d: d.groupBy(sw.count(3, order_by="seq", partition_by="k")).count(),
     r"sw_count: argument `partition_by` is only for select"),
    ("unknown count option", lambda d: d.groupBy(sw.count(3, order_by="seq", allign="end")).count(),
     r"sw_count: argument `allign` is not an option of sw_count; allowed options: step, align, order_by, partition_by"),
    ("sliding size zero", lambda d: d.groupBy(sw.sliding("ts", "0 seconds")).count(),
     r"sw_sliding: argument `size` must be positive"),
    ("sliding partition_by in groupBy", lambda d: d.groupBy(sw.sliding("ts", "1 second", partition_by="k")).count(),
     r"sw_sliding: argument `partition_by` is only for select"),
    ("session gap zero", lambda d: d.groupBy(sw.session("ts", "0 seconds")).count(),
     r"sw_session: argument `gap` must be positive"),
    ("session gap negative", lambda d: d.groupBy(sw.session("ts", "-3 seconds")).count(),
     r"sw_session: argument `gap` must be positive"),
    ("session max_duration below gap", lambda d: d.groupBy(sw.session("ts", "10 seconds", max_duration="5 seconds")).count(),
     r"sw_session: argument `max_duration` must be at least the gap"),
    ("session max_duration zero", lambda d: d.groupBy(sw.session("ts", "10 seconds", max_duration="0 seconds")).count(),
     r"sw_session: argument `max_duration` must be positive"),
    ("session max_duration with a dynamic gap", lambda d: d.groupBy(sw.session("ts", F.col("s"), max_duration="1 minute")).count(),
     r"sw_session: argument `max_duration` needs a fixed gap"),
    ("session gap column of numbers", lambda d: d.groupBy(sw.session("ts", F.col("seq"))).count(),
     r"sw_session: argument `gap` must be a duration literal or an INTERVAL or STRING column.*got BIGINT"),
    ("session time column of strings", lambda d: d.groupBy(sw.session("s", "1 second")).count(),
     r"sw_session: argument `time` must be a TIMESTAMP or TIMESTAMP_NTZ column, got STRING"),
    ("interval duration zero", lambda d: d.groupBy(sw.interval("ts", "0 seconds")).count(),
     r"sw_interval: argument `duration` must be positive"),
    ("interval creation_period zero", lambda d: d.groupBy(sw.interval("ts", "10 seconds", creation_period="0 seconds")).count(),
     r"sw_interval: argument `creation_period` must be positive"),
    ("interval discard_age negative", lambda d: d.groupBy(sw.interval("ts", "10 seconds", discard_age="-1 second")).count(),
     r"sw_interval: argument `discard_age` must be zero or positive"),
    ("interval ordered by an array", lambda d: d.groupBy(sw.interval("ts", "10 seconds", order_by="arr")).count(),
     r"sw_interval: argument `order_by` must be a numeric, string, date or timestamp column, got ARRAY<INT>"),
    ("interval unknown option", lambda d: d.groupBy(sw.interval("ts", "10 seconds", discardage="1 second")).count(),
     r"sw_interval: argument `discardage` is not an option of sw_interval; allowed options: creation_period, "
     r"discard_age, offset, order_by, partition_by"),
    ("timer period zero", lambda d: d.groupBy(sw.timer("0 seconds")).count(),
     r"sw_timer: argument `period` must be positive"),
    ("timer ingest_time of strings", lambda d: d.groupBy(sw.timer("1 second", ingest_time="s")).count(),
     r"sw_timer: argument `ingest_time` must be a TIMESTAMP or TIMESTAMP_NTZ column, got STRING"),
    ("two windows", lambda d: d.groupBy(sw.tumbling("ts", "1 second"), sw.hopping("ts", "2 seconds", "1 second")).count(),
     r"a query can group by one window column only, found 2"),
    ("window in an expression", lambda d: d.select(sw.tumbling("ts", "1 second").getField("start")),
     r"sw_tumbling: a window column cannot be used inside another expression"),
    ("window in a filter", lambda d: d.where(sw.tumbling("ts", "1 second").isNotNull()),
     r"sw_tumbling: a window column can only be used directly in groupBy\(...\) or select\(...\), not in Filter"),
    ("window aggregated without groupBy", lambda d: d.agg(F.count("*"), sw.tumbling("ts", "1 second")),
     r"sw_tumbling: a window column used in agg\(...\) must also be in groupBy"),
    ("distinct aggregate", lambda d: d.groupBy(sw.tumbling("ts", "1 second")).agg(F.count_distinct("v")),
     r"sw_tumbling: DISTINCT aggregates are not supported in windows.*approx_count_distinct"),
    ("column neither grouped nor aggregated", lambda d: d.groupBy(sw.tumbling("ts", "1 second")).agg((F.col("v") + F.sum("v")).alias("x")),
     r"sw_tumbling: `v` in .* is neither grouped nor aggregated"),
    ("two windows in one select", lambda d: d.select(sw.tumbling("ts", "1 second"), sw.tumbling("ts", "2 seconds").alias("w2")),
     r"a select can hold one window column only"),
]


@pytest.mark.parametrize("build,pattern", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_spec_is_an_analysis_exception(df, build, pattern):
    with pytest.raises(AnalysisException, match=pattern):
        build(df).collect()


def test_python_side_type_errors_name_the_argument():
    with pytest.raises(TypeError, match=r"argument `size` must be a duration"):
        sw.tumbling("ts", 10)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument `step` must be a duration"):
        sw.hopping("ts", "10 seconds", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument `size` must be a positive whole number of rows"):
        sw.count("10", order_by="seq")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"argument `step` must be a positive whole number of rows"):
        sw.count(10, step=1.5, order_by="seq")  # type: ignore[arg-type]


def test_timedelta_and_interval_arguments(df):
    a = df.groupBy(sw.hopping("ts", dt.timedelta(seconds=10), dt.timedelta(seconds=5))).count().collect()
    b = df.groupBy(F.call_function("sw_hopping", F.col("ts"), F.expr("INTERVAL 10 SECONDS"),
                                   F.expr("INTERVAL '5' SECOND"))).count().collect()
    assert [r[0] for r in a] == [r[0] for r in b] and len(a) == 2


def test_streaming_dataframes_get_the_same_checks(spark):
    # Streams are supported (tests/test_streaming.py); a wrong specification fails the same way,
    # at analysis, before any query starts.
    stream = spark.readStream.format("rate").option("rowsPerSecond", 1).load()
    with pytest.raises(AnalysisException, match=r"sw_count: argument `size` must be a positive whole number"):
        stream.select("value", sw.count(0, order_by="value"))
    with pytest.raises(AnalysisException, match=r"sw_tumbling: argument `time` must be a TIMESTAMP"):
        stream.groupBy(sw.tumbling("value", "10 seconds")).count()
    with pytest.raises(AnalysisException, match=r"sw_session: argument `order_by` is not available for sw_session"):
        stream.groupBy(sw.session("timestamp", "10 seconds", max_duration="1 minute", order_by="value")).count()
