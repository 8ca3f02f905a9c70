"""The window functions. Each builds a Column that calls one of the jar's SQL functions (``sw_*``),
so the same call works in classic PySpark and, where the server has the jar, under Spark Connect.

Arguments follow :mod:`pyspark.sql.functions`: a column is a name or a :class:`Column`; durations
are Spark interval strings (``"10 seconds"``, ``"1 minute"``) or :class:`datetime.timedelta`.
Every argument is validated by the jar at analysis time: a bad one raises an ``AnalysisException``
that names it and says what is allowed.

Event-time policies (keyword arguments, the same names in SQL and Scala; KX and Quix semantics):

- ``order_by``: the arrival order of each key's rows (a Kafka offset, an ingestion sequence).
  Default: event time. The key's progress is the largest event time seen so far.
- ``lateness`` (duration, default 0): a time window closes when progress reaches end + lateness;
  a row for a closed window is late.
- ``late="drop"`` (default, counted in ``lateRowsDropped``) or ``late="passthrough"`` (KX): late
  rows are output with ``kind = "late"``, grouped by the window they would have belonged to,
  just before the next windows close.
- ``emit="final"`` (default) or ``emit="update"`` (Quix ``current()``): after every row, each window
  it entered is output with ``kind = "update"``; at close once more with ``kind = "final"``.
- ``count_trigger=N`` (KX ``countTrigger``): a window's buffered rows are output with
  ``kind = "partial"`` once they reach N, and cleared; the rest is the ``final`` output.
- ``emit_empty=True`` (KX ``skipEmptyWindows=0b``): empty time windows between a key's first and
  last window are output too (count 0, other aggregates null).
- ``emit_every`` (duration; Flink's ``ContinuousEventTimeTrigger``, Beam's early firings): when a row
  moves the key's event-time progress past a multiple of the period (aligned to the epoch plus the
  window's ``offset``), each window that was open before that row and is still open after it is
  output with ``kind = "update"`` (its aggregate including that row), once per row however many
  multiples it passed; every window still outputs its ``final`` when it closes. On a stream the
  watermark moving an idle key's progress counts the same way. Tumbling, hopping, session (fixed
  gap, no ``max_duration``) and cumulate windows only; not with ``emit="update"``.
- ``idle_timeout`` (duration of processing time; KX's temporal timeout for idle streams): on a stream,
  when a key has held rows that long with nothing output for it, what each of its open windows holds
  is output with ``kind = "partial"`` and cleared; the windows stay open and output the rest later
  (more ``partial`` rows, then ``final``). Where ``count_trigger`` applies. A batch DataFrame has no
  processing time: there it changes nothing.

``tumbling`` and ``hopping`` take every policy; ``cumulate`` all but ``emit_empty``; ``sliding``
all but ``count_trigger``, ``emit_empty`` and ``emit_every``; ``session`` (fixed gap, no
``max_duration``) all but ``emit_empty``; ``timer`` ``emit``, ``count_trigger`` and ``emit_empty``;
``interval`` ``late`` and ``emit`` (its lateness is ``discard_age``); count windows (start-aligned)
and data windows ``emit`` and ``count_trigger``; ``idle_timeout`` goes wherever ``count_trigger`` does.
Any other combination is an ``AnalysisException`` that says why.

Every function also works on a streaming DataFrame (``spark.readStream``), with the same engine on
streamwin's own stateful operator, on Spark's state store (either provider; :func:`streamwin.configure`
selects RocksDB). Append mode outputs closed windows; ``emit="update"``
needs update mode. ``withWatermark`` also closes the windows of idle keys. A stream has no end, so
there are no teardown ``partial`` windows. Sessions with ``max_duration`` or a dynamic gap follow
event-time order: on a stream, a row older than its key's latest row is late.
"""

from __future__ import annotations

import datetime
from typing import Iterable, Optional, Union

from pyspark.sql import Column
from pyspark.sql import functions as F

# The window functions, re-exported by the package (a new family adds its function here only).
__all__ = ["tumbling", "hopping", "sliding", "session", "interval", "timer", "count", "split", "delta", "punctuation",
           "cumulate"]

ColumnOrName = Union[Column, str]
DurationLike = Union[str, datetime.timedelta]

# Policies whose value is a column (a name or a Column) rather than a literal.
_COLUMN_POLICIES = {"order_by", "ingest_time", "when"}
_MULTI_COLUMN_POLICIES = {"partition_by"}


def _is_column(value: object) -> bool:
    # Spark 3.5's Connect Column is a class of its own, not a pyspark.sql.Column (4.0 made it one).
    return isinstance(value, Column) or (type(value).__module__ == "pyspark.sql.connect.column"
                                         and type(value).__name__ == "Column")


def _to_col(value: ColumnOrName) -> Column:
    return value if _is_column(value) else F.col(value)  # type: ignore[return-value]


def _duration(name: str, value: DurationLike) -> Column:
    if isinstance(value, bool) or not isinstance(value, (str, datetime.timedelta)):
        raise TypeError(
            f"argument `{name}` must be a duration such as '10 seconds' or a datetime.timedelta, "
            f"got {type(value).__name__}"
        )
    return F.lit(value)


def _literal(name: str, value: object) -> Column:
    if _is_column(value):
        return value  # type: ignore[return-value]
    if isinstance(value, (str, int, float, bool, datetime.timedelta)):
        return F.lit(value)
    raise TypeError(f"argument `{name}` has unsupported type {type(value).__name__}")


def _window(function: str, required: list[Column], options: dict[str, object]) -> Column:
    args = list(required)
    for name, value in options.items():
        if value is None:
            continue
        if name in _COLUMN_POLICIES:
            args += [F.lit(name), _to_col(value)]  # type: ignore[arg-type]
        elif name in _MULTI_COLUMN_POLICIES:
            values: Iterable[ColumnOrName] = [value] if isinstance(value, str) or _is_column(value) else value  # type: ignore[assignment]
            for v in values:
                args += [F.lit(name), _to_col(v)]
        elif isinstance(value, datetime.timedelta):
            args += [F.lit(name), _duration(name, value)]
        else:
            args += [F.lit(name), _literal(name, value)]
    return F.call_function(function, *args).alias("window")


def tumbling(
    time: ColumnOrName,
    size: DurationLike,
    *,
    offset: Optional[DurationLike] = None,
    order_by: Optional[ColumnOrName] = None,
    lateness: Optional[DurationLike] = None,
    late: Optional[str] = None,
    emit: Optional[str] = None,
    count_trigger: Optional[int] = None,
    emit_empty: Optional[bool] = None,
    emit_every: Optional[DurationLike] = None,
    idle_timeout: Optional[DurationLike] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Tumbling event-time windows ``[offset + k*size, offset + (k+1)*size)``.

    Windows align to the UTC epoch plus ``offset`` (as Spark's ``window()``, Flink and Quix do).
    Grouped, it gives one row per non-empty window with ``window.kind = "final"``; selected, it tags
    each row with its window. Rows with a null time are skipped (and counted in the metrics).

    Parameters
    ----------
    time : column name or Column
        Event time, a TIMESTAMP or TIMESTAMP_NTZ column.
    size : str or datetime.timedelta
        Window length, e.g. ``"10 seconds"``.
    offset : str or datetime.timedelta, optional
        Shift of the window grid from the epoch (may be negative).
    order_by, lateness, late, emit, count_trigger, emit_empty, emit_every, idle_timeout
        Event-time policies (see the module documentation): with any of them, each key's rows are
        replayed one by one in arrival order.
    partition_by : column name(s) or Column(s), optional
        In a select with policies: the columns that split the rows into streams.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT 'a' AS k, timestamp_seconds(s) AS ts, s AS v FROM VALUES (1), (4), (12) AS t(s)")
    >>> out = df.groupBy("k", sw.tumbling("ts", "10 seconds")).agg(F.sum("v").alias("total"))
    >>> [(r.window.start.second, r.window.end.second, r.window.kind, r.total) for r in out.orderBy("window").collect()]
    [(0, 10, 'final', 5), (10, 20, 'final', 12)]

    KX's lateness example: rows arriving one by one (``seq``) at 0 4 3 8 10 1 12 9 ... seconds,
    2 seconds of lateness: the 1 still joins [0, 10), the 9 comes after the 12 closed it.

    >>> late = spark.sql("SELECT 'a' AS k, timestamp_seconds(s) AS ts, seq FROM VALUES "
    ...                  "(0, 0), (4, 1), (3, 2), (8, 3), (10, 4), (1, 5), (12, 6), (9, 7) AS t(s, seq)")
    >>> w = sw.tumbling("ts", "10 seconds", lateness="2 seconds", order_by="seq")
    >>> out = late.groupBy("k", w).agg(F.sort_array(F.collect_list(F.second("ts"))).alias("s"))
    >>> [(r.window.start.second, r.s) for r in out.orderBy("window").collect()]
    [(0, [0, 1, 3, 4, 8]), (10, [10, 12])]

    Early results every 5 seconds of event time: the row at 6 s passes 5 s, so the window [0, 10),
    open before it, outputs an ``update`` with what it holds so far (1 + 4 + 6), then its ``final``.

    >>> ticks = spark.sql("SELECT 'a' AS k, timestamp_seconds(s) AS ts, s AS v FROM VALUES (1), (4), (6), (8), (12) AS t(s)")
    >>> w = sw.tumbling("ts", "10 seconds", emit_every="5 seconds")
    >>> early = ticks.groupBy("k", w).agg(F.sum("v").alias("total"))
    >>> [(r.window.start.second, r.window.kind, r.total) for r in early.orderBy("window.start", "window.kind").collect()]
    [(0, 'final', 19), (0, 'update', 11), (10, 'final', 12)]
    """
    return _window("sw_tumbling", [_to_col(time), _duration("size", size)], {
        "offset": offset, "order_by": order_by, "lateness": lateness, "late": late, "emit": emit,
        "count_trigger": count_trigger, "emit_empty": emit_empty, "emit_every": emit_every,
        "idle_timeout": idle_timeout, "partition_by": partition_by,
        **policies})


def hopping(
    time: ColumnOrName,
    size: DurationLike,
    step: DurationLike,
    *,
    offset: Optional[DurationLike] = None,
    order_by: Optional[ColumnOrName] = None,
    lateness: Optional[DurationLike] = None,
    late: Optional[str] = None,
    emit: Optional[str] = None,
    count_trigger: Optional[int] = None,
    emit_empty: Optional[bool] = None,
    emit_every: Optional[DurationLike] = None,
    idle_timeout: Optional[DurationLike] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Hopping event-time windows of length ``size`` starting every ``step``.

    A row belongs to every window holding it (``size / step`` of them when ``step`` divides
    ``size``). With ``step > size`` there are gaps between windows; rows in a gap belong to no
    window and are counted as skipped. Aggregation pre-aggregates per slice, so the cost does not
    grow with ``size / step``. Takes every event-time policy, as :func:`tumbling` does; a row late
    for some of its windows still enters those that are open.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS ts FROM VALUES (1), (6) AS t(s)")
    >>> out = df.groupBy(sw.hopping("ts", "10 seconds", "5 seconds")).agg(F.count("*").alias("n"))
    >>> [(r.window.start.second, r.n) for r in out.orderBy("window").collect()]
    [(55, 1), (0, 2), (5, 1)]
    """
    return _window(
        "sw_hopping",
        [_to_col(time), _duration("size", size), _duration("step", step)],
        {"offset": offset, "order_by": order_by, "lateness": lateness, "late": late, "emit": emit,
         "count_trigger": count_trigger, "emit_empty": emit_empty, "emit_every": emit_every,
         "idle_timeout": idle_timeout, "partition_by": partition_by,
         **policies},
    )


def cumulate(
    time: ColumnOrName,
    size: DurationLike,
    step: DurationLike,
    *,
    offset: Optional[DurationLike] = None,
    order_by: Optional[ColumnOrName] = None,
    lateness: Optional[DurationLike] = None,
    late: Optional[str] = None,
    emit: Optional[str] = None,
    count_trigger: Optional[int] = None,
    emit_every: Optional[DurationLike] = None,
    idle_timeout: Optional[DurationLike] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Cumulative event-time windows, as Flink SQL's ``CUMULATE``: a daily total output every hour.

    Periods of ``size`` are aligned to the epoch (plus ``offset``); within each, windows share the
    period's start and grow by ``step``: ``[s, s + step)``, ``[s, s + 2·step)``, …, ``[s, s + size)``.
    ``size`` must be a whole multiple of ``step``. A window is output once it holds a row (as Flink
    does), so a period's windows begin at the step of its first row, and each later one holds that
    row too. Takes the event-time policies of :func:`tumbling` (not ``emit_empty``).

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS ts, v FROM VALUES (5, 4), (7, 2), (13, 1) AS t(s, v)")
    >>> out = df.groupBy(sw.cumulate("ts", "10 seconds", "5 seconds")).agg(F.sum("v").alias("total"))
    >>> [(r.window.start.second, r.window.end.second, r.total) for r in out.orderBy("window.end").collect()]
    [(0, 10, 6), (10, 15, 1), (10, 20, 1)]
    """
    return _window(
        "sw_cumulate",
        [_to_col(time), _duration("size", size), _duration("step", step)],
        {"offset": offset, "order_by": order_by, "lateness": lateness, "late": late, "emit": emit,
         "count_trigger": count_trigger, "emit_every": emit_every, "idle_timeout": idle_timeout,
         "partition_by": partition_by, **policies},
    )


def sliding(
    time: ColumnOrName,
    size: DurationLike,
    *,
    delay: Optional[DurationLike] = None,
    when: Optional[ColumnOrName] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Per-event sliding windows: one window per event time ``t`` of a key, covering
    ``[t - size, t]`` with both ends inclusive (eKuiper ``SLIDINGWINDOW``, Quix ``sliding_window``).

    ``window.start`` is ``t - size`` and ``window.end`` is ``t``. Rows sharing a timestamp share
    one window, which holds all of them (Quix: every interval has a distinct aggregation). Aggregates
    run over a FIFO of per-timestamp partial aggregates, so the cost per row does not grow with
    ``size``. In ``select``, each row is tagged with every window holding it; ``partition_by``
    names the columns that split the rows into independent streams.

    With ``delay`` (eKuiper ``SLIDINGWINDOW(unit, size, delay)``), the window of ``t`` also takes
    the rows that come up to ``delay`` after it: it covers ``[t - size, t + delay)`` (the end
    excluded, as in eKuiper), ``window.end`` is ``t + delay``, and it is output once the key's
    event time (on a stream, the watermark) reaches ``t + delay`` (plus ``lateness``, if given).
    ``size`` may then be zero: the window of ``t`` holds ``t`` and what follows it.

    With ``when`` (a boolean Column; eKuiper ``SLIDINGWINDOW(...) OVER (WHEN condition)``), only the
    rows matching the condition open a window; the other rows still join the windows whose range
    holds them ("collect one second before and one second after the temperature crosses zero").
    A null condition is false. Rows in no matched row's window are in no output, as in eKuiper.
    The rows then follow their event time (``order_by`` is refused).

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS ts, v FROM VALUES (0, 1), (5, 2), (20, 3) AS t(s, v)")
    >>> out = df.groupBy(sw.sliding("ts", "10 seconds")).agg(F.sum("v").alias("total"))
    >>> [(r.window.start.second, r.window.end.second, r.total) for r in out.orderBy("window").collect()]
    [(50, 0, 1), (55, 5, 3), (10, 20, 3)]
    >>> late = df.groupBy(sw.sliding("ts", "0 seconds", delay="10 seconds")).agg(F.sum("v").alias("total"))
    >>> [(r.window.start.second, r.window.end.second, r.total) for r in late.orderBy("window").collect()]
    [(0, 10, 3), (5, 15, 2), (20, 30, 3)]
    >>> around = df.groupBy(sw.sliding("ts", "5 seconds", delay="20 seconds", when=F.col("v") == 2))
    >>> [(r.window.start.second, r.window.end.second, r.total) for r in around.agg(F.sum("v").alias("total")).collect()]
    [(0, 25, 6)]
    """
    return _window(
        "sw_sliding",
        [_to_col(time), _duration("size", size)],
        {"delay": None if delay is None else _duration("delay", delay), "when": when, "partition_by": partition_by,
         **policies},
    )


def session(
    time: ColumnOrName,
    gap: Union[DurationLike, Column],
    *,
    max_duration: Optional[DurationLike] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Session windows: a session extends while the next row of the key is at most ``gap`` after
    the session's end so far, and ends at last row + ``gap`` (as Spark's ``session_window``).

    ``gap`` is a duration, or a Column of intervals or interval strings for a per-row gap (rows
    whose gap is null or not positive are skipped, as in Spark). ``max_duration`` cuts long
    sessions the way eKuiper's ``SESSIONWINDOW`` does: the checks happen at the ends of the
    ``max_duration`` periods aligned to the epoch; when a row arrives after a check time ``T`` and
    the session began before ``T - max_duration``, the session ends at ``T`` and the next one is
    reported as starting at ``T``.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS ts FROM VALUES (1), (4), (20) AS t(s)")
    >>> out = df.groupBy(sw.session("ts", "5 seconds")).agg(F.count("*").alias("n"))
    >>> [(r.window.start.second, r.window.end.second, r.n) for r in out.orderBy("window").collect()]
    [(1, 9, 2), (20, 25, 1)]
    """
    gap_col = gap if _is_column(gap) else _duration("gap", gap)
    return _window(
        "sw_session",
        [_to_col(time), gap_col],
        {"max_duration": max_duration, "partition_by": partition_by, **policies},
    )


def interval(
    time: ColumnOrName,
    duration: DurationLike,
    *,
    creation_period: Optional[DurationLike] = None,
    discard_age: Optional[DurationLike] = None,
    offset: Optional[DurationLike] = None,
    order_by: Optional[ColumnOrName] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """IBM Streams SPL ``timeInterval`` panes ``[offset + k*creation_period, + duration)``.

    Rows are replayed per key in ``order_by`` order (event-time order when not given); the key's
    progress is the largest event time seen so far. A pane is emitted with ``kind = "final"`` when
    progress reaches its end. A late row that arrives before progress reaches ``end + discard_age``
    updates the pane, which is emitted again whole with ``kind = "update"``; after that the pane
    is gone and later rows for it are late (dropped and counted in the metrics).
    ``creation_period`` defaults to ``duration`` and ``discard_age`` to 0.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS ts, seq FROM VALUES (1, 1), (12, 2), (3, 3) AS t(s, seq)")
    >>> w = sw.interval("ts", "10 seconds", discard_age="5 seconds", order_by="seq")
    >>> out = df.groupBy(w).agg(F.collect_list(F.second("ts")).alias("s"))
    >>> [(r.window.start.second, r.window.kind, r.s) for r in out.orderBy("window", "window.kind").collect()]
    [(0, 'final', [1]), (0, 'update', [1, 3]), (10, 'final', [12])]
    """
    return _window(
        "sw_interval",
        [_to_col(time), _duration("duration", duration)],
        {"creation_period": creation_period, "discard_age": discard_age, "offset": offset, "order_by": order_by,
         "partition_by": partition_by, **policies},
    )


def timer(period: DurationLike, *, ingest_time: Optional[ColumnOrName] = None, **policies: object) -> Column:
    """Processing-time windows (KX ``.qsp.window.timer``, SPL ``time(T)``): everything that
    arrived in each ``period``.

    In batch the arrival time is ``ingest_time`` (a timestamp column); without it the whole input
    is one arrival, at the query's processing time (``current_timestamp()``), so it all lands in one
    window. Windows align to the epoch like tumbling windows; ``window.kind`` is ``"final"``.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT timestamp_seconds(s) AS arrived FROM VALUES (1), (2), (7) AS t(s)")
    >>> out = df.groupBy(sw.timer("5 seconds", ingest_time="arrived")).agg(F.count("*").alias("n"))
    >>> [(r.window.start.second, r.n) for r in out.orderBy("window").collect()]
    [(0, 2), (5, 1)]
    """
    return _window("sw_timer", [_duration("period", period)], {"ingest_time": ingest_time, **policies})


def count(
    size: int,
    *,
    step: Optional[int] = None,
    align: str = "start",
    order_by: Optional[ColumnOrName] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Count windows of ``size`` rows per key, in ``order_by`` order.

    Rows of each key (the other ``groupBy`` columns, or ``partition_by`` in a select) are taken in
    ``order_by`` order (required: e.g. a Kafka offset or an ingestion sequence; two rows of one key
    with the same value are an error). ``step`` defaults to ``size`` and may not exceed it.

    - ``align="start"`` (KX ``count[size; frequency]``, Quix tumbling/hopping/sliding count windows,
      SPL ``count(N)``): windows start at the key's rows 0, step, 2*step, ...; ``step=1`` gives sliding
      windows. A window still incomplete at the end of the input has ``kind = "partial"``.
    - ``align="end"`` (eKuiper ``COUNTWINDOW(size, step)``): at every step-th row, once at least
      ``size`` rows arrived, a window holds the latest ``size`` rows. Rows before the first such window
      are in no window (counted as skipped); rows after the last one form a ``partial`` window.

    ``window.start``/``window.end`` are the first and last member's ``order_by`` value.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.range(5).withColumnRenamed("id", "seq")
    >>> out = df.groupBy(sw.count(2, order_by="seq")).agg(F.sum("seq").alias("total"))
    >>> [(r.window.start, r.window.end, r.window.kind, r.total) for r in out.orderBy("window").collect()]
    [(0, 1, 'final', 1), (2, 3, 'final', 5), (4, 4, 'partial', 4)]
    >>> ek = spark.range(1, 8).withColumnRenamed("id", "event")
    >>> out = ek.groupBy(sw.count(5, step=2, align="end", order_by="event")).agg(F.collect_list("event").alias("events"))
    >>> [(r.window.kind, r.events) for r in out.orderBy("window").collect()]
    [('final', [2, 3, 4, 5, 6]), ('partial', [4, 5, 6, 7])]
    """
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"argument `size` must be a positive whole number of rows, got {type(size).__name__}")
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise TypeError(f"argument `step` must be a positive whole number of rows, got {type(step).__name__}")
    return _window(
        "sw_count",
        [F.lit(size)],
        {"step": step, "align": None if align == "start" else align, "order_by": order_by,
         "partition_by": partition_by, **policies},
    )


def split(
    predicate: ColumnOrName,
    *,
    order_by: Optional[ColumnOrName] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """Windows split by a predicate: a new window starts at each row where ``predicate`` is true.

    KX ``.qsp.window.global`` with a splitting trigger. The first window starts at the key's first
    row; a null predicate counts as false. Each window is emitted (``final``) when the next one
    starts; the last open window is emitted at the end of the input as ``partial``. Stateful rules
    become a column computed with window functions first (window functions cannot sit inside the
    predicate itself).

    Example
    -------
    >>> from pyspark.sql import SparkSession, Window, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.createDataFrame([(1, "run"), (2, "run"), (3, "new"), (4, "run")], "seq int, status string")
    >>> out = df.groupBy(sw.split(F.col("status") == "new", order_by="seq")).agg(F.collect_list("seq").alias("rows"))
    >>> [(r.window.kind, r.rows) for r in out.orderBy("window").collect()]
    [('final', [1, 2]), ('partial', [3, 4])]

    KX's high-water mark, starting at 15: a window starts at a value above every earlier value and
    above 15 (the mark is the larger of the two; ``greatest`` skips the null before a key's first row):

    >>> vals = spark.createDataFrame([("a", i, v) for i, v in enumerate([0, 1, 5, 14, 15, 16, 17, 18, 16, 17, 16])],
    ...                              "k string, seq long, val long")
    >>> earlier = Window.partitionBy("k").orderBy("seq").rowsBetween(Window.unboundedPreceding, -1)
    >>> mark = F.greatest(F.max("val").over(earlier), F.lit(15))
    >>> flagged = vals.withColumn("new_high", F.col("val") > mark)
    >>> out = flagged.groupBy("k", sw.split("new_high", order_by="seq")).agg(F.collect_list("val").alias("vals"))
    >>> [(r.window.kind, r.vals) for r in out.orderBy("window").collect()]
    [('final', [0, 1, 5, 14, 15]), ('final', [16]), ('final', [17]), ('partial', [18, 16, 17, 16])]
    """
    return _window("sw_split", [_to_col(predicate)],
                   {"order_by": order_by, "partition_by": partition_by, **policies})


def delta(
    column: ColumnOrName,
    threshold: Union[int, float],
    *,
    order_by: Optional[ColumnOrName] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """SPL ``delta(attribute, threshold)`` tumbling windows.

    When a row arrives and its ``column`` value minus the value of the current window's *oldest*
    row is greater than ``threshold``, the window is emitted and the row starts the next one.
    ``column`` is numeric (compared as a double) or a timestamp (``threshold`` in seconds, fractions
    allowed). Rows with a null ``column`` are skipped (and counted). The last open window is emitted
    at the end of the input as ``partial``.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.createDataFrame(list(enumerate([16.0, 16.4, 17.1, 17.6])), "seq int, temp double")
    >>> out = df.groupBy(sw.delta("temp", 1.5, order_by="seq")).agg(F.collect_list("temp").alias("temps"))
    >>> [(r.window.kind, r.temps) for r in out.orderBy("window").collect()]
    [('final', [16.0, 16.4, 17.1]), ('partial', [17.6])]
    """
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
        raise TypeError(f"argument `threshold` must be a number >= 0, got {type(threshold).__name__}")
    return _window("sw_delta", [_to_col(column), F.lit(threshold)],
                   {"order_by": order_by, "partition_by": partition_by, **policies})


def punctuation(
    column: ColumnOrName,
    *,
    order_by: Optional[ColumnOrName] = None,
    partition_by: Optional[Union[ColumnOrName, Iterable[ColumnOrName]]] = None,
    **policies: object,
) -> Column:
    """SPL ``punct()`` windows: a row whose boolean ``column`` is true closes the current window.

    Marker rows are no member of any window and are not counted as data (the metrics count them as
    skipped); a null marker counts as false. A marker on an empty window emits nothing. The rows after
    the last marker are emitted at the end of the input as ``partial``.

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.createDataFrame([(1, 5, False), (2, 7, False), (3, None, True), (4, 1, False)], "seq int, v int, mark boolean")
    >>> out = df.groupBy(sw.punctuation("mark", order_by="seq")).agg(F.sum("v").alias("total"))
    >>> [(r.window.kind, r.total) for r in out.orderBy("window").collect()]
    [('final', 12), ('partial', 1)]
    """
    return _window("sw_punctuation", [_to_col(column)],
                   {"order_by": order_by, "partition_by": partition_by, **policies})
