"""Rows that windows keep spill to disk past the task's memory budget (issue 15): with a budget of
2 KiB almost every kept row goes through a spill file, and every family gives exactly the result
it gives in memory, in both forms, including the order of each key's outputs."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

import streamwin as sw

BUDGET = "spark.streamwin.buffer.memoryBytes"

#: Window builders; ``select`` adds partition_by for the families that take it.
CASES = {
    "tumbling order_by+lateness": lambda select: sw.tumbling("ts", "10 seconds", order_by="seq", lateness="3 seconds",
                                                             late="passthrough", **_by(select)),
    "hopping update": lambda select: sw.hopping("ts", "20 seconds", "10 seconds", emit="update", **_by(select)),
    "sliding lateness": lambda select: sw.sliding("ts", "5 seconds", order_by="seq", lateness="2 seconds", **_by(select)),
    "session count_trigger": lambda select: sw.session("ts", "4 seconds", count_trigger=25, order_by="seq", **_by(select)),
    "session": lambda select: sw.session("ts", "4 seconds", **_by(select)),
    "sliding": lambda select: sw.sliding("ts", "8 seconds", **_by(select)),
    "interval": lambda select: sw.interval("ts", "10 seconds", order_by="seq", discard_age="5 seconds", **_by(select)),
    "count 50 step 20": lambda select: sw.count(50, step=20, order_by="seq", **_by(select)),
    "count 40 update": lambda select: sw.count(40, step=10, emit="update", order_by="seq", **_by(select)),
    "delta": lambda select: sw.delta("v", 60, order_by="seq", **_by(select)),
    "split": lambda select: sw.split(F.col("v") == 0, order_by="seq", **_by(select)),
}


#: groupBy forms whose windows keep rows (aggregated at each output), not only aggregation buffers.
KEEPS_ROWS = {"sliding lateness", "session count_trigger"}


def _by(select: bool) -> dict:
    return {"partition_by": "k"} if select else {}


@pytest.fixture(scope="module")
def readings(spark):
    # Two keys; event time mostly ascending with some rows out of order (seq is the arrival order).
    rows = [("a" if i % 5 else "b", i, (i * 37) % 101, i // 4 - (7 if i % 13 == 0 else 0)) for i in range(1500)]
    df = spark.createDataFrame(rows, "k string, seq long, v long, s long")
    return df.withColumn("ts", F.timestamp_seconds("s")).withColumn("pad", F.repeat(F.lit("x"), 40))


def _run(spark, df, name: str, select: bool, budget: str | None) -> tuple[list, int]:
    if budget is None:
        spark.conf.unset(BUDGET)
    else:
        spark.conf.set(BUDGET, budget)
    try:
        window = CASES[name](select)
        if select:
            out = df.select("k", "seq", "pad", window)
            rows = out.collect()
            # Per key, in output order (a key's rows come out in the order the engine emits them).
            result = sorted((r.k, i, r.seq, r.window.start, r.window.end, r.window.kind) for i, r in enumerate(rows))
        else:
            out = df.groupBy("k", window).agg(F.collect_list("seq").alias("members"), F.max("pad").alias("p"))
            result = [(r.k, r.window.start, r.window.end, r.window.kind, list(r.members)) for r in out.collect()]
        return result, sw.window_metrics(out).get("spillSize", 0)
    finally:
        spark.conf.unset(BUDGET)


@pytest.mark.parametrize("select", [False, True], ids=["groupBy", "select"])
@pytest.mark.parametrize("name", list(CASES))
def test_spilled_rows_give_the_same_windows(spark, readings, name, select):
    df = readings.repartition(1)
    in_memory, no_spill = _run(spark, df, name, select, None)
    spilled, spill_bytes = _run(spark, df, name, select, "2k")
    assert in_memory, name
    assert spilled == in_memory
    assert no_spill == 0
    if select or name in KEEPS_ROWS:
        # The windows' rows really went through spill files.
        assert spill_bytes > 0
