"""docs/troubleshooting.md quotes every message a user can meet, as the code writes it.

Two checks: every user-facing message in the sources (streamwin's AnalysisExceptions, the errors its
tasks and checkpoints raise, the Python package's) has its text on the page; and the page's messages,
with their `<...>` placeholders, are what the code really raises: each is triggered here and matched
against the exception."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest
from pyspark.sql import SparkSession, functions as F
from pyspark.sql.window import Window

import streamwin as sw
import streamwin._jar as jar_module
from spark_lines import SPARK_3
from streamwin.plot import plot_windows

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "troubleshooting.md"

# ---------------------------------------------------------------------------------------------------
# Every message in the code is on the page.

_EXCEPTIONS = re.compile(
    r"StreamwinErrors\.(?:misuse|invalidArgument)\(|"
    r"new (?:IllegalStateException|IllegalArgumentException|SparkException|SparkLineMismatchException)\(|"
    r"Some\(s\"streamwin")


def _scala_literals(text: str) -> list[tuple[int, int, bool, list[str]]]:
    """The string literals of a piece of Scala source: (start, end, interpolated, literal parts), where the
    parts of an s-string are the text between its ${...} and $name interpolations."""
    literals = []
    i = 0
    while i < len(text):
        interpolated = text.startswith('s"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        if text[i] == '"' or interpolated:
            start = i
            i += 2 if interpolated else 1
            parts, current = [], ""
            while i < len(text) and text[i] != '"':
                if text[i] == "\\":
                    current += text[i + 1]
                    i += 2
                elif interpolated and text.startswith("${", i):
                    parts.append(current)
                    current, depth = "", 0
                    while True:  # skip the expression, with its nested braces and strings
                        if text[i] == "{":
                            depth += 1
                        elif text[i] == "}":
                            depth -= 1
                            if depth == 0:
                                break
                        elif text[i] == '"':
                            i = text.index('"', i + 1)
                        i += 1
                    i += 1
                elif interpolated and text[i] == "$" and re.match(r"\$[A-Za-z_]", text[i:i + 2]):
                    parts.append(current)
                    current = ""
                    i += 1 + len(re.match(r"\w+", text[i + 1:]).group(0))
                else:
                    current += text[i]
                    i += 1
            parts.append(current)
            literals.append((start, i + 1, interpolated, parts))
            i += 1
        else:
            i += 1
    return literals


def _string_end(source: str, i: int) -> int:
    """The index of the quote closing the string literal whose opening quote is at `i`."""
    quote, i = source[i], i + 1
    while source[i] != quote:
        i += 2 if source[i] == "\\" else 1
    return i


def _call(source: str, start: int) -> str:
    """The text from `start` to the parenthesis closing the first one opened there."""
    depth, i = 0, source.index("(", start)
    while i < len(source):
        if source[i] == '"':
            i = _string_end(source, i)
        elif source[i] == "(":
            depth += 1
        elif source[i] == ")":
            depth -= 1
            if depth == 0:
                return source[start:i + 1]
        i += 1
    return source[start:]


def _fragments(call: str) -> list[str]:
    """The fixed text of a message: literals joined by `+` are one text, cut at each interpolation."""
    texts: list[list[str]] = []
    previous_end = None
    for start, end, _, parts in _scala_literals(call):
        joined = previous_end is not None and re.fullmatch(r"\s*\+\s*", call[previous_end:start])
        if joined:
            texts[-1][-1] += parts[0]
            texts[-1].extend(parts[1:])
        else:
            texts.append(list(parts))
        previous_end = end
    return [fragment for parts in texts for fragment in parts]


def _user_messages() -> dict[str, list[str]]:
    """Fixed fragments (12 characters or more) of every user-facing message, by where it is written."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "jvm").rglob("*.scala")):
        if "/test/" in path.as_posix():
            continue
        source = path.read_text()
        for match in _EXCEPTIONS.finditer(source):
            call = _call(source, match.start())
            fragments = _fragments(call)
            text = "".join(fragments)
            user_facing = match.group(0).startswith(("StreamwinErrors", "Some", "new SparkException")) or \
                "streamwin" in text or re.search(r"\$\{?\w+Conf\b", call)
            if user_facing:
                line = source.count("\n", 0, match.start()) + 1
                found[f"{path.relative_to(ROOT)}:{line}"] = [f for f in fragments if len(f.strip()) >= 12]
    for path in sorted((ROOT / "python" / "streamwin").glob("*.py")):
        source = path.read_text()
        for match in re.finditer(r"raise \w+\(", source):
            call = _call(source, match.start())
            literals = re.findall(r"f?\"((?:[^\"\\]|\\.)*)\"", call)
            fragments = [f for text in literals for f in re.split(r"\{[^}]*\}", text)]
            line = source.count("\n", 0, match.start()) + 1
            found[f"{path.relative_to(ROOT)}:{line}"] = [f for f in fragments if len(f.strip()) >= 12]
    return found


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_scan_finds_the_messages_it_should() -> None:
    # The scan itself: it must see the messages of each kind, or the next test checks nothing.
    messages = _user_messages()
    everything = " | ".join(f for fragments in messages.values() for f in fragments)
    for expected in ["must be a whole multiple of step (", "written by another query",
                     "two rows of the same key have order_by `", " must be a positive size in bytes (e.g. 64m), got '",
                     "is built for Spark ", "no streamwin jar for Spark ", "window_metrics needs a classic PySpark",
                     " is neither grouped nor aggregated; add it to groupBy(...)"]:
        assert expected in everything, f"the scan of the sources misses {expected!r}"
    assert len(messages) >= 70


def test_every_message_in_the_code_is_on_the_page() -> None:
    page = _normalise(PAGE.read_text())
    missing = [(where, fragment) for where, fragments in _user_messages().items() for fragment in fragments
               if _normalise(fragment) not in page]
    assert not missing, "docs/troubleshooting.md does not quote these messages:\n" + "\n".join(
        f"  {where}: {fragment!r}" for where, fragment in missing)


# ---------------------------------------------------------------------------------------------------
# The page's messages are what the code raises.

def _documented() -> list[str]:
    """Every line of the page's ```text blocks (a block of several lines that are one message is joined)."""
    lines, block = [], None
    for line in PAGE.read_text().splitlines():
        if line.strip() == "```text":
            block = []
        elif line.strip() == "```" and block is not None:
            if block and block[0].startswith("[STATE_STORE"):
                lines.append(" ".join(block))
            else:
                lines.extend(block)
            block = None
        elif block is not None:
            block.append(line)
    return lines


def _pattern(template: str) -> re.Pattern:
    pieces = re.split(r"<[^<>]+>", template)
    return re.compile(".+?".join(re.escape(_normalise(p)) for p in pieces), re.DOTALL)


def _raised(action: Callable[[], object]) -> str:
    with pytest.raises(Exception) as raised:
        action()
    return _normalise(str(raised.value))


@pytest.fixture(scope="module")
def readings(spark):
    df = spark.createDataFrame(
        [("a", "2026-01-01 09:00:01", 1, 20.5, "x", 1000), ("a", "2026-01-01 09:00:04", 2, 21.0, "y", 4000),
         ("a", "2026-01-01 09:00:12", 2, 22.0, "z", 12000)],
        "sensor string, ts string, seq long, temp double, s string, ms long",
    ).withColumn("ts", F.to_timestamp("ts"))
    df.createOrReplaceTempView("trouble_readings")
    return df


def _sql(spark, query: str) -> Callable[[], object]:
    return lambda: spark.sql(query).collect()


def _stream(spark, tmp_path: Path, readings, build, conf: dict[str, str] | None = None) -> Callable[[], object]:
    def run():
        folder = tmp_path / "in"
        readings.write.mode("overwrite").parquet(str(folder))
        previous = {k: spark.conf.get(k, None) for k in (conf or {})}
        for k, v in (conf or {}).items():
            spark.conf.set(k, v)
        try:
            query = (build(spark.readStream.schema(readings.schema).parquet(str(folder))).writeStream.format("noop")
                     .option("checkpointLocation", str(tmp_path / "checkpoint")).trigger(availableNow=True).start())
            try:
                query.awaitTermination(120)
            finally:
                query.stop()
        finally:
            for k, v in previous.items():
                spark.conf.unset(k) if v is None else spark.conf.set(k, v)
    return run


def _with_conf(spark, key: str, value: str, action: Callable[[], object]) -> Callable[[], object]:
    def run():
        spark.conf.set(key, value)
        try:
            return action()
        finally:
            spark.conf.unset(key)
    return run


def _cases(spark, readings, tmp_path: Path, monkeypatch) -> dict[str, Callable[[], object]]:
    """For a line of the page (its start, up to the first placeholder or the first 60 characters that
    tell it apart), the action that raises it."""
    d = readings
    ts10 = sw.tumbling("ts", "10 seconds")

    def unsupported_pyspark():
        with monkeypatch.context() as m:
            m.setattr(jar_module, "_installed_spark_version", lambda: "3.4.1")
            sw.configure(SparkSession.builder)

    def no_jar_for_scala():
        with monkeypatch.context() as m:
            m.setattr(jar_module, "_installed_spark_version", lambda: "4.1.4")
            m.setattr(jar_module, "_installed_scala_version", lambda: "2.12")
            m.delenv("STREAMWIN_JAR", raising=False)
            sw.jar_path()

    def no_jar():
        with monkeypatch.context() as m:
            m.setattr(jar_module, "_PACKAGE_DIR", tmp_path / "site" / "packages" / "streamwin")
            m.delenv("STREAMWIN_JAR", raising=False)
            sw.jar_path()

    def jar_env():
        with monkeypatch.context() as m:
            m.setenv("STREAMWIN_JAR", str(tmp_path / "nothing.jar"))
            sw.jar_path()

    def other_line():
        raise RuntimeError(spark._jvm.streamwin.SparkLineCheck.mismatch("4.1.4", "2.13.16").getMessage())

    def ekuiper(query):
        return _with_conf(spark, "spark.streamwin.ekuiper.timestamp", "ms", _sql(spark, query))

    lag = F.lag("temp").over(Window.orderBy("seq"))
    return {
        "streamwin does not support Spark": unsupported_pyspark,
        "no streamwin jar for Spark": no_jar,
        "streamwin has no jar for Spark": no_jar_for_scala,
        "STREAMWIN_JAR=": jar_env,
        "streamwin: this jar (": other_line,
        # (Spark 3.5 words it "Cannot resolve function".)
        "[UNRESOLVED_ROUTINE] Cannot resolve " + ("function" if SPARK_3 else "routine"):
            _sql(spark, "SELECT sw_tumbling_nowhere(1)"),
        "sw_<function>: argument `<argument>` must be a duration such as '10 seconds', INTERVAL 10 SECONDS or a "
        "Python timedelta; cannot parse": lambda: d.groupBy(sw.tumbling("ts", "ten seconds")).count().collect(),
        "sw_<function>: argument `<argument>` must be a duration such as '10 seconds', INTERVAL 10 SECONDS or a "
        "Python timedelta, got": lambda: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit(1.5))).count()
        .collect(),
        "sw_<function>: argument `<argument>` must be a duration such as '10 seconds', INTERVAL 10 SECONDS or a "
        "Python timedelta, not NULL": lambda: d.groupBy(F.call_function("sw_tumbling", F.col("ts"), F.lit(None)))
        .count().collect(),
        "sw_<function>: argument `<argument>` must be a fixed duration": lambda: d.groupBy(sw.tumbling("ts", "1 month"))
        .count().collect(),
        "argument `<argument>` must be a duration such as '10 seconds' or a datetime.timedelta": lambda: sw.tumbling(
            "ts", 10),
        "argument `<argument>` has unsupported type": lambda: sw.tumbling("ts", "1 second", count_trigger=[1]),
        "sw_<function>: argument `<argument>` must be positive": lambda: d.groupBy(sw.tumbling("ts", "0 seconds"))
        .count().collect(),
        "sw_<function>: argument `<argument>` must be zero or positive": lambda: d.groupBy(
            sw.interval("ts", "10 seconds", discard_age="-1 second")).count().collect(),
        "sw_sliding: argument `size` must be positive, or zero with a delay": lambda: d.groupBy(
            sw.sliding("ts", "0 seconds")).count().collect(),
        "sw_count: argument `size` must be a positive whole number of rows": lambda: d.groupBy(
            sw.count(0, order_by="seq")).count().collect(),
        "sw_delta: argument `threshold` must be a number >= 0, got": lambda: d.groupBy(
            sw.delta("temp", -1.0, order_by="seq")).count().collect(),
        "sw_delta: argument `threshold` must be a number >= 0, not NULL": lambda: d.groupBy(
            F.call_function("sw_delta", F.col("temp"), F.lit(None), F.lit("order_by"), F.col("seq"))).count().collect(),
        "argument `size` must be a positive whole number of rows": lambda: sw.count("10", order_by="seq"),
        "argument `step` must be a positive whole number of rows": lambda: sw.count(10, step=1.5, order_by="seq"),
        "argument `threshold` must be a number >= 0": lambda: sw.delta("temp", "1"),
        "sw_<function>: argument `time` must be a TIMESTAMP": lambda: d.groupBy(sw.tumbling("s", "1 second")).count()
        .collect(),
        "sw_count: argument `step` must not exceed size": lambda: d.groupBy(sw.count(3, step=4, order_by="seq"))
        .count().collect(),
        "sw_cumulate: argument `size` must be a whole multiple": lambda: d.groupBy(
            sw.cumulate("ts", "10 seconds", "3 seconds")).count().collect(),
        "sw_session: argument `max_duration` must be at least": lambda: d.groupBy(
            sw.session("ts", "10 seconds", max_duration="5 seconds")).count().collect(),
        "sw_session: argument `max_duration` needs a fixed gap": lambda: d.groupBy(
            sw.session("ts", F.col("s"), max_duration="1 minute")).count().collect(),
        "sw_<function>: missing required argument": lambda: d.groupBy(
            F.call_function("sw_hopping", F.col("ts"), F.lit("1 second"))).count().collect(),
        "sw_<function>: too many positional arguments": _sql(
            spark, "SELECT count(*) FROM trouble_readings GROUP BY sw_tumbling(ts, '1 second', '2 seconds', "
                   "offset => '1 second')"),
        "sw_<function>: argument `<option>` is not an option": lambda: d.groupBy(
            sw.tumbling("ts", "10 seconds", latenes="1 second")).count().collect(),
        "sw_<function>: argument `<option>` is given more than once": lambda: d.groupBy(F.call_function(
            "sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit("offset"), F.lit("1 second"), F.lit("offset"),
            F.lit("2 seconds"))).count().collect(),
        "sw_<function>: options must come as pairs": lambda: d.groupBy(F.call_function(
            "sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit("offset"))).count().collect(),
        "sw_<function>: expected an option name": lambda: d.groupBy(F.call_function(
            "sw_tumbling", F.col("ts"), F.lit("1 second"), F.lit(1), F.lit(2))).count().collect(),
        "sw_<function>: argument `<option>` must be one of": lambda: d.groupBy(
            sw.tumbling("ts", "10 seconds", late="keep")).count().collect(),
        "sw_<function>: argument `<option>` must be TRUE or FALSE": lambda: d.groupBy(
            sw.tumbling("ts", "10 seconds", emit_empty="yes")).count().collect(),
        "sw_count: argument `order_by` is required": lambda: d.groupBy(sw.count(3)).count().collect(),
        "sw_<function>: argument `<policy>` is not available for": lambda: d.groupBy(
            sw.count(2, order_by="seq", lateness="1 second")).count().collect(),
        "sw_<function>: argument `idle_timeout` is not available for": lambda: d.groupBy(
            sw.sliding("ts", "10 seconds", idle_timeout="1 second")).count().collect(),
        "sw_<function>: argument `emit_every` is not available for": lambda: d.groupBy(
            sw.count(2, order_by="seq", emit_every="1 second")).count().collect(),
        "sw_<function>: argument `emit_every` adds nothing": lambda: d.groupBy(
            sw.tumbling("ts", "10 seconds", emit_every="1 second", emit="update")).count().collect(),
        "sw_<function>: argument `partition_by` is only for select": lambda: d.groupBy(
            sw.count(3, order_by="seq", partition_by="sensor")).count().collect(),
        "sw_<function>: window functions (OVER ...)": lambda: d.groupBy(
            sw.split(F.col("temp") > lag, order_by="seq")).count().collect(),
        "sw_<function>: a window column can only be used directly": lambda: d.where(ts10.isNotNull()).collect(),
        "sw_<function>: a window column cannot be used inside": lambda: d.select(ts10.getField("start")).collect(),
        "sw_<function>: a window column used in agg": lambda: d.agg(F.count("*"), ts10).collect(),
        "sw_<function>: a query can group by one window": lambda: d.groupBy(
            ts10, sw.hopping("ts", "2 seconds", "1 second")).count().collect(),
        "sw_<function>: a select can hold one window": lambda: d.select(
            ts10, sw.tumbling("ts", "2 seconds").alias("w2")).collect(),
        "sw_<function>: DISTINCT aggregates": lambda: d.groupBy(ts10).agg(F.count_distinct("temp")).collect(),
        "sw_<function>: `<column>` in <expression> is neither": lambda: d.groupBy(ts10).agg(
            (F.col("temp") + F.sum("temp")).alias("x")).collect(),
        "The input is not a correct window column": _sql(
            spark, "WITH per AS (SELECT sensor, sw_tumbling(ts, '10 seconds') AS w, count(*) AS n "
                   "FROM trouble_readings GROUP BY 1, 2) SELECT sensor, window_time(w) AS t FROM per"),
        "sw_<function>: two rows of the same key": lambda: d.groupBy("sensor", sw.count(2, order_by="seq")).count()
        .collect(),
        "sw_<function>: idle_timeout runs the query": _stream(spark, tmp_path / "idle", readings, lambda s: s.groupBy(
            "sensor", sw.tumbling("ts", "10 seconds", idle_timeout="1 second")).count()),
        "sw_timer: windows of processing time": _stream(spark, tmp_path / "timer", readings, lambda s: s.groupBy(
            "sensor", sw.timer("1 second")).count()),
        "sw_<function>: the state store encoding": _stream(
            spark, tmp_path / "avro", readings, lambda s: s.groupBy("sensor", ts10).count(),
            {"spark.sql.streaming.stateStore.encodingFormat": "avro"}),
        "spark.streamwin.buffer.memoryBytes must be": _with_conf(
            spark, "spark.streamwin.buffer.memoryBytes", "lots",
            lambda: d.select("sensor", "seq", sw.session("ts", "1 minute", partition_by="sensor")).collect()),
        "streamwin: spark.streamwin.stream.inlineKeptRows must be": _stream(
            spark, tmp_path / "inline", readings,
            lambda s: s.select("sensor", "seq", sw.count(2, order_by="seq", partition_by="sensor")),
            {"spark.streamwin.stream.inlineKeptRows": "-1"}),
        "<WINDOW>: needs the event-time column": _sql(
            spark, "SELECT count(*) FROM trouble_readings GROUP BY TUMBLINGWINDOW(ss, 10)"),
        "COUNTWINDOW: needs the order of its rows": _sql(
            spark, "SELECT count(*) FROM trouble_readings GROUP BY COUNTWINDOW(5)"),
        "COUNTWINDOW: argument `interval` must not exceed the size": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY COUNTWINDOW(5, 6)"),
        "<WINDOW>: argument `unit`": ekuiper("SELECT count(*) FROM trouble_readings GROUP BY TUMBLINGWINDOW(sec, 10)"),
        "<WINDOW>: argument `<argument>` must be a positive integer": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY TUMBLINGWINDOW(ss, 0)"),
        "<WINDOW>: takes <n> argument(s)": ekuiper("SELECT count(*) FROM trouble_readings GROUP BY TUMBLINGWINDOW(ss)"),
        "<WINDOW>: an eKuiper window belongs in GROUP BY": ekuiper(
            "SELECT TUMBLINGWINDOW(ss, 10) FROM trouble_readings"),
        "SLIDINGWINDOW: argument `delay` must be a non-negative integer literal": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY SLIDINGWINDOW(ss, 2, -1)"),
        "<WINDOW>: OVER (WHEN condition) triggers sliding windows only": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY HOPPINGWINDOW(ss, 2, 1) OVER (WHEN temp > 1)"),
        "SLIDINGWINDOW: OVER (WHEN condition) needs a condition": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN)"),
        "SLIDINGWINDOW: positional parameters (?) in both FILTER and OVER": lambda: _with_conf(
            spark, "spark.streamwin.ekuiper.timestamp", "ms", lambda: spark.sql(
                "SELECT count(*) FROM trouble_readings GROUP BY SLIDINGWINDOW(ss, 2) FILTER (WHERE temp > ?) "
                "OVER (WHEN temp > ?)", args=[1, 2]).collect())(),
        "last_hit_time(): is only available in the condition of a sliding window": ekuiper(
            "SELECT last_hit_time() FROM trouble_readings"),
        "last_hit_time(): takes no arguments": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY SLIDINGWINDOW(ss, 2) OVER (WHEN last_hit_time(1) > 0)"),
        "sw_sliding: argument `order_by` cannot be combined with `when`": lambda: d.groupBy(
            sw.sliding("ts", "5 seconds", when=F.col("temp") > 0, order_by="seq")).count().collect(),
        "<WINDOW>: a query groups by one eKuiper window": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY TUMBLINGWINDOW(ss, 10), HOPPINGWINDOW(ss, 10, 5)"),
        "<WINDOW>: FILTER takes a WHERE clause": ekuiper(
            "SELECT count(*) FROM trouble_readings GROUP BY TUMBLINGWINDOW(ss, 10) FILTER sensor = 'a'"),
        "window_start(): is only available": _sql(spark, "SELECT window_start() FROM trouble_readings"),
        "window_start(): takes no arguments": ekuiper(
            "SELECT window_start(1) FROM trouble_readings GROUP BY TUMBLINGWINDOW(ss, 10)"),
        "window_metrics needs a classic PySpark DataFrame": lambda: sw.window_metrics(42),
        "plot_windows: `cause` is a column of a groupBy result": lambda: plot_windows(
            d.select("seq", "ts", ts10), position="ts", cause="seq"),
        "plot_windows: `threshold` draws a limit": lambda: plot_windows(
            d.groupBy(ts10).count(), d, position="ts", threshold=1.0),
        "plot_windows: `dropped`, `marks`, `cause` and `value` are about rows": lambda: plot_windows(
            d.groupBy(ts10).count(), position="ts", value="temp"),
        "plot_windows: the <kind> output of": lambda: plot_windows(
            d.groupBy(ts10).agg(F.max(F.lit(99)).alias("made_by")), d, position="ts", cause="made_by", row_id="seq"),
    }


@pytest.fixture(scope="module")
def page_lines() -> list[str]:
    return _documented()


def test_documented_messages_are_the_ones_the_code_raises(spark, readings, tmp_path, monkeypatch, page_lines) -> None:
    cases = _cases(spark, readings, tmp_path, monkeypatch)
    wrong = []
    for start, action in cases.items():
        documented = [line for line in page_lines if line.startswith(start)]
        assert len(documented) == 1, f"no single line of the page starts with {start!r}: {documented}"
        message = _raised(action)
        if not _pattern(documented[0]).search(message):
            wrong.append(f"page: {documented[0]}\n  raised: {message[:600]}")
    assert not wrong, "the page's messages differ from what the code raises:\n" + "\n".join(wrong)
    assert len(cases) >= 60


def test_changed_query_on_a_checkpoint_is_refused_as_the_page_says(spark, tmp_path, page_lines) -> None:
    # A count window's state, restarted as a tumbling window in arrival order (streamwin's fingerprint of the
    # window function: the state rows have the same columns),
    # and a select's windows restarted over another input column (Spark's schema check).
    folder, rows = tmp_path / "in", [("a", i, i, i % 3) for i in range(10)]
    spark.createDataFrame(rows[:5], "k string, s long, seq long, v long").write.parquet(str(folder / "0"))
    schema = "k string, s long, seq long, v long"

    def run(build, checkpoint):
        src = spark.readStream.schema(schema).parquet(str(folder / "*"))
        query = (build(src).writeStream.format("noop").option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True).start())
        try:
            query.awaitTermination(120)
        finally:
            query.stop()

    count = lambda: sw.count(4, step=2, order_by="seq")
    timed = lambda s: s.withColumn("ts", F.timestamp_seconds("s"))
    run(lambda s: timed(s).groupBy("k", count()).agg(F.sum("v")), tmp_path / "c1")
    run(lambda s: s.select("k", "seq", "v", sw.count(4, step=2, order_by="seq", partition_by="k")), tmp_path / "c2")
    spark.createDataFrame(rows[5:], schema).write.parquet(str(folder / "1"))
    other = next(line for line in page_lines if line.startswith("streamwin: this streaming checkpoint holds window "
                                                                  "state written by another query"))
    message = _raised(lambda: run(lambda s: timed(s).groupBy("k", sw.tumbling("ts", "10 seconds", order_by="seq"))
                                  .agg(F.sum("v")), tmp_path / "c1"))
    assert _pattern(other).search(message), message[:1500]
    changed = next(line for line in page_lines if line.startswith(
        "StateSchemaNotCompatible: Provided schema" if SPARK_3 else "[STATE_STORE_VALUE_SCHEMA_NOT_COMPATIBLE]"))
    message = _raised(lambda: run(lambda s: s.withColumn("v2", F.col("v") * 2).select(
        "k", "seq", "v", "v2", sw.count(4, step=2, order_by="seq", partition_by="k")), tmp_path / "c2"))
    assert _pattern(changed).search(message), message[:1500]


def test_a_retired_checkpoint_is_refused_as_the_page_says(spark, tmp_path, page_lines) -> None:
    from checkpoint_cases import RETIRED, source
    from test_golden_checkpoints import RETIRED_FOLDER, _restore

    retired = next(line for line in page_lines if line.startswith("<function>: the checkpoint <path> holds"))
    for name, case in RETIRED.items():
        _restore(RETIRED_FOLDER / name, tmp_path / name)
        query = (case.query(source(spark, tmp_path / name / "input")).writeStream.format("noop")
                 .option("checkpointLocation", str(tmp_path / name / "checkpoint")).start())
        try:
            message = _raised(query.processAllAvailable)
        finally:
            query.stop()
        assert _pattern(retired).search(message), message[:1500]
