"""Pictures of windows: one key's rows on the time (or order) axis, and the windows over them as bars.

Needs matplotlib (``pip install matplotlib``, or the wheel built by ``bin/wheel`` installed with its
``plot`` extra: ``pip install 'dist/streamwin-0.1.0-py3-none-any.whl[plot]'``); it is imported only
when a picture is drawn. :func:`plot_windows` returns a matplotlib ``Figure``, which a
notebook shows as it is, and which ``path=`` (or ``figure.savefig``) writes as a PNG.

Each bar is one window output, coloured by its ``kind``: ``final`` (blue), ``partial`` (orange),
``update`` (light blue) and ``late`` (red). The rows are the dots at the bottom. Time windows are drawn
``[start, end)`` on the time axis; count and data windows, whose ``start``/``end`` are the first and
last member's ``order_by`` value, cover their first and last row on the order axis.

Optionally a picture also shows rows dropped as late (a red X), other marked rows (the rows where a
split predicate fired, punctuation markers), the row that made each output (a triangle on the bar, linked
to the row), and a value panel above the bars (a delta window's attribute, with each window's limit).
:func:`drawn_windows`, :func:`drawn_marks`, :func:`drawn_causes` and :func:`drawn_values` read a
picture back, so tests can compare it with the data.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["plot_windows", "drawn_windows", "drawn_marks", "drawn_causes", "drawn_values", "axis_value",
           "WindowBar", "KIND_COLOURS", "DROPPED_LABEL"]

# One colour per window kind (the legend shows the kinds a picture has, in this order).
KIND_COLOURS: dict[str, str] = {
    "final": "#2f6db5",
    "partial": "#e8912d",
    "update": "#9cc3e6",
    "late": "#c8383b",
}
# The legend entry of the rows `dropped=` marks (drawn_marks returns them under this name).
DROPPED_LABEL = "dropped as late"
_KIND_RANK = {kind: rank for rank, kind in enumerate(["update", "partial", "final", "late"])}
_BAR_GID = "streamwin-window"
_MARK_GID = "streamwin-mark"
_CAUSE_GID = "streamwin-cause"
_VALUE_GID = "streamwin-value"
_THRESHOLD_GID = "streamwin-threshold"
# Marker and colour of each `marks=` entry, in order (the dropped rows' red X is kept for them alone).
_MARK_STYLES = [("v", "#7b3fa0"), ("D", "#1a9a6c"), ("s", "#b8860b"), ("^", "#555555")]
_CAUSE_COLOUR = "#222222"
_CAUSE_OFFSET = 0.3  # a cause marker sits this far above its bar's lane centre (bars are 0.7 high)

RowSelection = Union[str, Column, DataFrame]


@dataclass(frozen=True)
class WindowBar:
    """One window output as drawn: its bounds, kind, the text on it, the positions of the rows it tags,
    and the id of the row that made it (``cause=``)."""

    start: Any
    end: Any
    kind: str
    label: Optional[str] = None
    members: tuple = ()
    cause: Any = None


def _matplotlib() -> Any:
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401 (checks the install is complete)
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "streamwin.plot needs matplotlib: `pip install matplotlib` (or install streamwin's wheel "
            "with its `plot` extra, `pip install '<the wheel>.whl[plot]'`)"
        ) from error
    return matplotlib


def axis_value(value: Any) -> float:
    """The place of a window bound or row position on the picture's axis.

    Timestamps become matplotlib date numbers (days since the epoch, naive times taken as UTC), numbers
    stay as they are.

    >>> axis_value(3)
    3.0
    >>> axis_value(datetime.datetime(1970, 1, 2, 12))
    1.5
    """
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
        return (value - epoch).total_seconds() / 86400.0
    if isinstance(value, datetime.date):
        return float((value - datetime.date(1970, 1, 1)).days)
    return float(value)


def _format_label(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_label(v) for v in value) + "]"
    if isinstance(value, datetime.datetime):
        return value.strftime("%H:%M:%S")
    return str(value)


def _for_key(df: DataFrame, key: Optional[Mapping[str, Any]]) -> DataFrame:
    for name, value in (key or {}).items():
        df = df.where(F.col(name).isNull() if value is None else F.col(name) == F.lit(value))
    return df


def _cause_order(cause: Any) -> tuple:
    return (0, cause) if cause is not None else (1, 0)


def _bars(windows: DataFrame, window: str, position: Optional[str], label: Optional[str],
          cause: Optional[str] = None) -> list[WindowBar]:
    """The window outputs of a groupBy (one bar per output row) or a select (one bar per distinct window)."""
    is_select = position is not None and position in windows.columns
    if is_select:
        if cause is not None:
            raise ValueError("plot_windows: `cause` is a column of a groupBy result (a select tags rows, "
                             "each window once)")
        collected: dict[tuple, list] = {}
        for row in windows.select(F.col(window).alias("w"), F.col(position).alias("p")).collect():
            if row.w is None:  # a row no window tags (none does in streamwin's selects; other frames may)
                continue
            collected.setdefault((row.w.start, row.w.end, row.w.kind), []).append(row.p)
        bars = [WindowBar(start, end, kind, None, tuple(sorted(members)))
                for (start, end, kind), members in collected.items()]
    else:
        columns = [F.col(window).alias("w")] + ([F.col(label).alias("label")] if label else []) + \
            ([F.col(cause).alias("cause")] if cause else [])
        bars = [WindowBar(r.w.start, r.w.end, r.w.kind, _format_label(r.label) if label else None,
                          cause=r.cause if cause else None)
                for r in windows.select(*columns).collect()]
    # Outputs of one window keep the order of the rows that made them (their cause, when given).
    return sorted(bars, key=lambda b: (axis_value(b.start), axis_value(b.end), _KIND_RANK.get(b.kind, 9),
                                       _cause_order(b.cause), b.label or ""))


def _order_padding(values: Sequence[float]) -> float:
    """Half the smallest gap between distinct positions: a bar covers its first and last row whole."""
    distinct = sorted(set(values))
    gaps = [b - a for a, b in zip(distinct, distinct[1:]) if b > a]
    return 0.5 * min(gaps) if gaps else 0.5


def _as_column(expression: Union[str, Column]) -> Column:
    return F.col(expression) if isinstance(expression, str) else expression


@dataclass
class _Row:
    """One input row as drawn: its position, the text above it, its id, its value, the marks it has."""

    position: Any
    text: Optional[str]
    id: Any
    value: Any
    marks: tuple[bool, ...]


def _rows(source: DataFrame, distinct: bool, position: str, row_label: Optional[str], row_id: Optional[str],
          value: Optional[str], mark_columns: Sequence[Column]) -> list[_Row]:
    columns = [F.col(position).alias("p")]
    columns += [F.col(row_label).alias("l")] if row_label else []
    columns += [F.col(row_id).alias("i")] if row_id else []
    columns += [F.col(value).alias("v")] if value else []
    columns += [F.coalesce(c, F.lit(False)).alias(f"m{n}") for n, c in enumerate(mark_columns)]
    picked = source.select(*columns)
    if distinct:
        picked = picked.distinct()
    return [_Row(r.p, _format_label(r.l) if row_label else None, r.i if row_id else r.p,
                 r.v if value else None, tuple(bool(r[f"m{n}"]) for n in range(len(mark_columns))))
            for r in picked.collect() if r.p is not None]


def plot_windows(
    windows: DataFrame,
    rows: Optional[DataFrame] = None,
    *,
    position: Optional[str] = None,
    key: Optional[Mapping[str, Any]] = None,
    label: Optional[str] = None,
    row_label: Optional[str] = None,
    window: str = "window",
    title: Optional[str] = None,
    path: Optional[str] = None,
    dropped: Optional[RowSelection] = None,
    marks: Optional[Mapping[str, RowSelection]] = None,
    cause: Optional[str] = None,
    row_id: Optional[str] = None,
    value: Optional[str] = None,
    threshold: Optional[float] = None,
) -> "Figure":
    """Draw one key's rows and the windows over them; return the matplotlib ``Figure``.

    Parameters
    ----------
    windows : DataFrame
        A DataFrame that used a window: a ``groupBy`` result (each output row is one bar, so updates,
        partials and late groups of the same window are bars of their own) or a ``select`` that tagged
        rows (then ``windows`` has the ``position`` column: each distinct window is one bar, with the
        rows it tags marked on it).
    rows : DataFrame, optional
        The input rows, drawn as dots on the axis (for a select, the tagged rows are used when not given).
    position : str, optional
        The column that places a row on the axis: the event time for time windows, the ``order_by``
        column for count and data windows (their ``start``/``end`` are ``order_by`` values). Needed to
        draw rows.
    key : mapping, optional
        Column values that pick one key, e.g. ``{"sensor": "a"}``; applied to ``windows``, ``rows`` and
        the DataFrames given to ``dropped`` and ``marks``.
    label : str, optional
        A column of a groupBy result written on each bar (an aggregate).
    row_label : str, optional
        A column of the rows written above each dot (e.g. the event time's second); the rows' tick names it.
    window : str
        The window column's name (``window`` unless it was aliased).
    title : str, optional
        The picture's title.
    path : str, optional
        Also save the picture there (PNG, from the file name's suffix).
    dropped : str, Column or DataFrame, optional
        The rows dropped as late, drawn as a red X with the legend entry :data:`DROPPED_LABEL`: a boolean
        column or expression of the rows, or a DataFrame of those rows (placed by ``position``), e.g. the
        input rows a select does not return: ``rows.join(tagged, "seq", "left_anti")``.
    marks : mapping, optional
        Other rows to mark, ``{legend text: rows}`` with rows given as for ``dropped``: each entry has its
        own marker and legend entry (e.g. the rows where a split predicate holds, punctuation markers).
    cause : str, optional
        A column of a groupBy result: the ``row_id`` of the input row that made each output (e.g. the
        row after which an ``update`` was emitted); null for none. A triangle on the bar's top edge at that
        row's position, linked to the row by a dotted line, shows it.
    row_id : str, optional
        The column of the rows that ``cause`` refers to (default: ``position``).
    value : str, optional
        A numeric column of the rows drawn in a panel above the bars, at each row's position (the
        attribute a delta window cuts on).
    threshold : float, optional
        With ``value``: over each window, a dashed line at its first row's value plus ``threshold`` (a
        delta window holds the rows up to that line; the first row above it starts the next window).

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> from streamwin.plot import plot_windows, drawn_windows, drawn_marks, drawn_causes, drawn_values
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT s AS seq FROM VALUES (0), (1), (2), (3), (4) AS t(s)")
    >>> out = df.groupBy(sw.count(2, order_by="seq")).agg(F.count("*").alias("n"))
    >>> figure = plot_windows(out, df, position="seq", label="n")
    >>> drawn_windows(figure)
    [(0.0, 1.0, 'final'), (2.0, 3.0, 'final'), (4.0, 4.0, 'partial')]

    Marks, causes and a value panel: delta windows of 1.5 over a temperature, the rows above 17.5
    marked, and each update linked to the row that made it:

    >>> temps = spark.createDataFrame([(1, 16.0), (2, 17.1), (3, 17.6), (4, 18.0)], "seq long, temp double")
    >>> deltas = temps.groupBy(sw.delta("temp", 1.5, order_by="seq", emit="update")).agg(
    ...     F.max("seq").alias("last"))
    >>> updates = deltas.withColumn("made_by", F.when(F.col("window.kind") == "update", F.col("last")))
    >>> figure = plot_windows(updates, temps, position="seq", marks={"above 17.5": F.col("temp") > 17.5},
    ...                       cause="made_by", value="temp", threshold=1.5)
    >>> drawn_marks(figure)
    {'above 17.5': [3.0, 4.0]}
    >>> [(start, kind, row) for start, end, kind, row in drawn_causes(figure)]
    [(1.0, 'update', 1.0), (1.0, 'update', 2.0), (3.0, 'update', 3.0), (3.0, 'update', 4.0)]
    >>> drawn_values(figure)
    [(1.0, 16.0), (2.0, 17.1), (3.0, 17.6), (4.0, 18.0)]
    """
    _matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    import matplotlib.dates as mdates

    if threshold is not None and value is None:
        raise ValueError("plot_windows: `threshold` draws a limit on the `value` panel; name the `value` column")
    windows = _for_key(windows, key)
    bars = _bars(windows, window, position, label, cause)

    # Each mark: (legend text, marker, colour, a boolean column of the rows or a DataFrame of the rows).
    mark_specs: list[tuple[str, str, str, RowSelection]] = []
    if dropped is not None:
        mark_specs.append((DROPPED_LABEL, "X", KIND_COLOURS["late"], dropped))
    for n, (text, selection) in enumerate((marks or {}).items()):
        marker, colour = _MARK_STYLES[n % len(_MARK_STYLES)]
        mark_specs.append((text, marker, colour, selection))
    needs_rows = bool(mark_specs) or cause is not None or value is not None

    row_data: list[_Row] = []
    source = rows if rows is not None else (windows if position and position in windows.columns else None)
    if needs_rows and source is None:
        raise ValueError("plot_windows: `dropped`, `marks`, `cause` and `value` are about rows: pass `rows`")
    if source is not None:
        if position is None:
            raise ValueError("plot_windows: `position` names the column that places each row on the axis")
        source = _for_key(source, key) if rows is not None else source
        column_marks = [_as_column(s) for _, _, _, s in mark_specs if not isinstance(s, DataFrame)]
        row_data = _rows(source, rows is None, position, row_label, row_id if cause else None, value,
                         column_marks)
    marked: list[list[Any]] = []  # per mark, the positions of its rows
    column_index = 0
    for _, _, _, selection in mark_specs:
        if isinstance(selection, DataFrame):
            picked = _for_key(selection, key).select(F.col(position).alias("p")).distinct().collect()
            marked.append(sorted((r.p for r in picked if r.p is not None), key=axis_value))
        else:
            marked.append([r.position for r in row_data if r.marks[column_index]])
            column_index += 1

    bounds = [b.start for b in bars] + [b.end for b in bars] + [r.position for r in row_data]
    is_time = any(isinstance(v, datetime.datetime) for v in bounds)
    padding = 0.0 if is_time else _order_padding([axis_value(v) for v in bounds])

    lanes = max(len(bars), 1)
    value_height = 1.7 if value is not None else 0.0
    figure = Figure(figsize=(9, 1.3 + 0.34 * lanes + value_height), layout="constrained")
    if value is not None:
        grid = figure.add_gridspec(2, 1, height_ratios=[value_height, 0.34 * lanes + 0.9])
        axes = figure.add_subplot(grid[1])  # the bars stay figure.axes[0]
        value_axes = figure.add_subplot(grid[0], sharex=axes)
    else:
        axes = figure.add_subplot()
        value_axes = None
    for lane, bar in enumerate(bars, start=1):
        x0 = axis_value(bar.start) - padding
        width = axis_value(bar.end) + padding - x0
        colour = KIND_COLOURS.get(bar.kind, "#777777")
        axes.barh(lane, width, left=x0, height=0.7, color=colour, edgecolor="#333333", linewidth=0.6,
                  gid=f"{_BAR_GID}:{bar.kind}:{padding!r}")
        if bar.label is not None:
            dark = bar.kind in ("final", "late")
            axes.text(x0 + width / 2, lane, bar.label, ha="center", va="center", fontsize=8,
                      color="white" if dark else "black", clip_on=True)
        if bar.members:
            axes.plot([axis_value(m) for m in bar.members], [lane] * len(bar.members), "o", ms=3.5,
                      color="white", markeredgecolor="#222222", markeredgewidth=0.6)
    if row_data:
        xs = [axis_value(r.position) for r in row_data]
        # A marked row shows its mark instead of the plain dot (a dot behind a mark blurs it).
        covered = {axis_value(p) for positions in marked for p in positions}
        plain = [x for x in xs if x not in covered]
        axes.plot(plain, [0] * len(plain), "o", color="#222222", ms=5, zorder=3)
        for x, row in zip(xs, row_data):
            if row.text is not None:
                axes.annotate(row.text, (x, 0), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    mark_handles = []
    for (text, marker, colour, _), positions in zip(mark_specs, marked):
        xs = [axis_value(p) for p in positions]
        size = 9
        axes.plot(xs, [0] * len(xs), marker, ls="none", ms=size, color=colour, markeredgecolor="white",
                  markeredgewidth=0.7, zorder=4, gid=f"{_MARK_GID}:{text}")
        mark_handles.append(Line2D([], [], marker=marker, ls="none", ms=size * 0.8, color=colour,
                                   markeredgecolor="white", label=text))
    if cause is not None:
        where = {row.id: axis_value(row.position) for row in row_data}
        for lane, bar in enumerate(bars, start=1):
            if bar.cause is None:
                continue
            if bar.cause not in where:
                raise ValueError(f"plot_windows: the {bar.kind} output of [{bar.start}, {bar.end}) names "
                                 f"{cause} = {bar.cause!r}, which no row's {row_id or position} has")
            x = where[bar.cause]
            # The link runs behind the bars from the row down to its output; the triangle points into the
            # bar at its top edge, clear of the label in the middle.
            top = lane - _CAUSE_OFFSET
            axes.plot([x, x], [0, top], ":", color="#666666", linewidth=0.8, zorder=0.9)
            axes.plot([x], [top], "v", ms=6, color=_CAUSE_COLOUR, markeredgecolor="white",
                      markeredgewidth=0.6, zorder=4, gid=_CAUSE_GID)
        mark_handles.append(Line2D([], [], marker="v", ls=":", ms=5, color=_CAUSE_COLOUR, markeredgecolor="white",
                                   label="the row that made it"))
    # Bars pin the axis to their edges (matplotlib's sticky edges), which would cut the outermost rows'
    # dots in half: set the limits with a margin instead.
    xs_all = [axis_value(b.start) - padding for b in bars] + [axis_value(b.end) + padding for b in bars] + \
        [axis_value(r.position) for r in row_data]
    if xs_all:
        lo, hi = min(xs_all), max(xs_all)
        margin = (hi - lo) * 0.03 or 0.5
        axes.set_xlim(lo - margin, hi + margin)
    axes.set_ylim(-0.8, lanes + 0.7)
    axes.set_yticks([0] + list(range(1, len(bars) + 1)),
                    [f"rows ({row_label})" if row_label else "rows"] + [bar.kind for bar in bars], fontsize=7)
    axes.invert_yaxis()
    axes.grid(axis="x", color="#dddddd", linewidth=0.6)
    axes.set_axisbelow(True)
    if is_time:
        locator = mdates.AutoDateLocator()
        axes.xaxis.set_major_locator(locator)
        span = max(axis_value(v) for v in bounds) - min(axis_value(v) for v in bounds)
        axes.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M:%S") if span < 1
                                       else mdates.ConciseDateFormatter(locator))
        axes.set_xlabel("event time" if position is None else position)
    else:
        axes.xaxis.get_major_locator().set_params(integer=True)
        axes.set_xlabel(position or "order")
    if value_axes is not None:
        _draw_values(value_axes, bars, row_data, value, threshold, padding)
    kinds = sorted({bar.kind for bar in bars}, key=lambda k: _KIND_RANK.get(k, 9))
    handles = [Patch(color=KIND_COLOURS.get(k, "#777777"), label=k) for k in kinds] + mark_handles
    if handles:
        axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if title:
        (value_axes or axes).set_title(title, fontsize=10, loc="left")
    if path is not None:
        figure.savefig(path, dpi=110)
    return figure


def _draw_values(value_axes: Any, bars: Sequence[WindowBar], row_data: Sequence[_Row], value: str,
                 threshold: Optional[float], padding: float) -> None:
    """The value panel: each row's value at its position, and each window's first value + threshold."""
    from matplotlib.lines import Line2D

    points = sorted((axis_value(r.position), axis_value(r.value)) for r in row_data if r.value is not None)
    value_axes.plot([x for x, _ in points], [v for _, v in points], "-", color="#bbbbbb", linewidth=0.8, zorder=2)
    value_axes.plot([x for x, _ in points], [v for _, v in points], "o", color="#222222", ms=5, zorder=3,
                    gid=_VALUE_GID)
    for x, v in points:
        value_axes.annotate(_format_label(v), (x, v), textcoords="offset points", xytext=(0, -11), ha="center",
                            fontsize=7)
    handles = [Line2D([], [], marker="o", ls="-", color="#222222", markerfacecolor="#222222", ms=4, label=value)]
    if threshold is not None:
        first_value = {axis_value(r.position): axis_value(r.value) for r in row_data if r.value is not None}
        # One limit per window: its outputs (updates, partials, final) share the first row, so the widest.
        spans: dict[float, tuple[float, str]] = {}
        for bar in bars:
            start, end = axis_value(bar.start), axis_value(bar.end)
            if start in first_value and (start not in spans or end >= spans[start][0]):
                spans[start] = (end, bar.kind)
        for start, (end, kind) in spans.items():
            limit = first_value[start] + threshold
            x0, x1 = start - padding, end + padding
            colour = KIND_COLOURS.get(kind, "#777777")
            value_axes.plot([x0, x1], [limit] * 2, "--", color=colour, linewidth=1.2, zorder=1, gid=_THRESHOLD_GID)
            value_axes.axvspan(x0, x1, color=colour, alpha=0.10, linewidth=0, zorder=0)
            # Windows of one kind touch: a line where each starts keeps them apart.
            value_axes.axvline(x0, color="#999999", linewidth=0.7, zorder=0.5)
        handles.append(Line2D([], [], ls="--", color="#555555", label=f"a window's first value + {threshold:g}"))
    low = min((v for _, v in points), default=0.0)
    high = max([v for _, v in points] + [line.get_ydata()[0] for line in value_axes.lines
                                         if line.get_gid() == _THRESHOLD_GID], default=1.0)
    room = (high - low) * 0.18 or 0.5
    value_axes.set_ylim(low - room, high + room)
    value_axes.set_ylabel(value, fontsize=8)
    value_axes.tick_params(axis="both", labelsize=7)
    value_axes.tick_params(axis="x", labelbottom=False)
    value_axes.grid(color="#eeeeee", linewidth=0.6)
    value_axes.set_axisbelow(True)
    value_axes.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)


def _bar_lanes(figure: "Figure") -> list[tuple[float, float, float, str]]:
    """(lane centre, start, end, kind) of each bar of a plot_windows picture, top to bottom."""
    found = []
    for axes in figure.axes:
        for patch in axes.patches:
            gid = patch.get_gid() or ""
            if not gid.startswith(_BAR_GID + ":"):
                continue
            _, kind, padding = gid.split(":", 2)
            pad = float(padding)
            x0 = patch.get_x()
            found.append((patch.get_y() + patch.get_height() / 2, x0 + pad, x0 + patch.get_width() - pad, kind))
    found.sort(key=lambda item: item[0])
    return found


def drawn_windows(figure: "Figure") -> list[tuple[float, float, str]]:
    """The windows a picture of :func:`plot_windows` shows, read back from its bars: ``(start, end, kind)``
    on the axis (see :func:`axis_value`), top to bottom. Tests compare them with the DataFrame's windows.

    >>> from matplotlib.figure import Figure
    >>> drawn_windows(Figure())
    []
    """
    return [(_tidy(start), _tidy(end), kind) for _, start, end, kind in _bar_lanes(figure)]


def drawn_marks(figure: "Figure") -> dict[str, list[float]]:
    """The marked rows of a picture of :func:`plot_windows`: ``{legend text: sorted positions}`` on the
    axis, with the rows ``dropped=`` marks under :data:`DROPPED_LABEL`.

    >>> from matplotlib.figure import Figure
    >>> drawn_marks(Figure())
    {}
    """
    found: dict[str, list[float]] = {}
    for axes in figure.axes:
        for line in axes.lines:
            gid = line.get_gid() or ""
            if gid.startswith(_MARK_GID + ":"):
                found[gid.split(":", 1)[1]] = sorted(_tidy(x) for x in line.get_xdata())
    return found


def drawn_causes(figure: "Figure") -> list[tuple[float, float, str, float]]:
    """The outputs of a picture of :func:`plot_windows` linked to the row that made them:
    ``(start, end, kind, that row's position)``, top to bottom.

    >>> from matplotlib.figure import Figure
    >>> drawn_causes(Figure())
    []
    """
    lanes = _bar_lanes(figure)
    found = []
    for axes in figure.axes:
        for line in axes.lines:
            if line.get_gid() != _CAUSE_GID:
                continue
            x, y = float(line.get_xdata()[0]), float(line.get_ydata()[0]) + _CAUSE_OFFSET
            centre, start, end, kind = min(lanes, key=lambda lane: abs(lane[0] - y))
            found.append((centre, _tidy(start), _tidy(end), kind, _tidy(x)))
    found.sort(key=lambda item: item[0])
    return [(start, end, kind, x) for _, start, end, kind, x in found]


def drawn_values(figure: "Figure") -> list[tuple[float, float]]:
    """The ``(position, value)`` points of a picture's value panel (``value=``), left to right.

    >>> from matplotlib.figure import Figure
    >>> drawn_values(Figure())
    []
    """
    for axes in figure.axes:
        for line in axes.lines:
            if line.get_gid() == _VALUE_GID:
                return [(_tidy(x), _tidy(v)) for x, v in zip(line.get_xdata(), line.get_ydata())]
    return []


def _tidy(value: float) -> float:
    """Rounds away the float noise of drawing (bounds are whole microseconds or order values)."""
    # float(): numpy's floats (matplotlib's coordinates) print as np.float64(...) otherwise.
    rounded = float(round(float(value), 9))
    return 0.0 if rounded == 0 or math.isclose(rounded, 0.0, abs_tol=1e-12) else rounded
