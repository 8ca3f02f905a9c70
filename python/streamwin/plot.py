"""Pictures of windows: one key's rows on the time (or order) axis, and the windows over them as bars.

Needs matplotlib (``pip install matplotlib``, or the wheel built by ``bin/wheel`` installed with its
``plot`` extra: ``pip install 'dist/streamwin-0.1.0-py3-none-any.whl[plot]'``); it is imported only
when a picture is drawn. :func:`plot_windows` returns a matplotlib ``Figure``, which a
notebook shows as it is, and which ``path=`` (or ``figure.savefig``) writes as a PNG.

Each bar is one window output, coloured by its ``kind``: ``final`` (blue), ``partial`` (orange),
``update`` (light blue) and ``late`` (red). The rows are the dots at the bottom. Time windows are drawn
``[start, end)`` on the time axis; count and data windows, whose ``start``/``end`` are the first and
last member's ``order_by`` value, cover their first and last row on the order axis.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["plot_windows", "drawn_windows", "axis_value", "WindowBar", "KIND_COLOURS"]

# One colour per window kind (the legend shows the kinds a picture has, in this order).
KIND_COLOURS: dict[str, str] = {
    "final": "#2f6db5",
    "partial": "#e8912d",
    "update": "#9cc3e6",
    "late": "#c8383b",
}
_KIND_RANK = {kind: rank for rank, kind in enumerate(["update", "partial", "final", "late"])}
_BAR_GID = "streamwin-window"


@dataclass(frozen=True)
class WindowBar:
    """One window output as drawn: its bounds, kind, the text on it and the positions of the rows it tags."""

    start: Any
    end: Any
    kind: str
    label: Optional[str] = None
    members: tuple = ()


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


def _bars(windows: DataFrame, window: str, position: Optional[str], label: Optional[str]) -> list[WindowBar]:
    """The window outputs of a groupBy (one bar per output row) or a select (one bar per distinct window)."""
    is_select = position is not None and position in windows.columns
    if is_select:
        collected: dict[tuple, list] = {}
        for row in windows.select(F.col(window).alias("w"), F.col(position).alias("p")).collect():
            collected.setdefault((row.w.start, row.w.end, row.w.kind), []).append(row.p)
        bars = [WindowBar(start, end, kind, None, tuple(sorted(members)))
                for (start, end, kind), members in collected.items()]
    else:
        columns = [F.col(window).alias("w")] + ([F.col(label).alias("label")] if label else [])
        bars = [WindowBar(r.w.start, r.w.end, r.w.kind, _format_label(r.label) if label else None)
                for r in windows.select(*columns).collect()]
    return sorted(bars, key=lambda b: (axis_value(b.start), axis_value(b.end), _KIND_RANK.get(b.kind, 9), b.label or ""))


def _order_padding(values: Sequence[float]) -> float:
    """Half the smallest gap between distinct positions: a bar covers its first and last row whole."""
    distinct = sorted(set(values))
    gaps = [b - a for a, b in zip(distinct, distinct[1:]) if b > a]
    return 0.5 * min(gaps) if gaps else 0.5


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
        Column values that pick one key, e.g. ``{"sensor": "a"}``; applied to ``windows`` and ``rows``.
    label : str, optional
        A column of a groupBy result written on each bar (an aggregate).
    row_label : str, optional
        A column of ``rows`` written above each dot (e.g. the arrival order).
    window : str
        The window column's name (``window`` unless it was aliased).
    title : str, optional
        The picture's title.
    path : str, optional
        Also save the picture there (PNG, from the file name's suffix).

    Example
    -------
    >>> from pyspark.sql import SparkSession, functions as F
    >>> import streamwin as sw
    >>> from streamwin.plot import plot_windows, drawn_windows
    >>> spark = sw.configure(SparkSession.builder.master("local[1]")).getOrCreate()
    >>> df = spark.sql("SELECT s AS seq FROM VALUES (0), (1), (2), (3), (4) AS t(s)")
    >>> out = df.groupBy(sw.count(2, order_by="seq")).agg(F.count("*").alias("n"))
    >>> figure = plot_windows(out, df, position="seq", label="n")
    >>> drawn_windows(figure)
    [(0.0, 1.0, 'final'), (2.0, 3.0, 'final'), (4.0, 4.0, 'partial')]
    """
    _matplotlib()
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch
    import matplotlib.dates as mdates

    windows = _for_key(windows, key)
    bars = _bars(windows, window, position, label)
    row_data: list[tuple[Any, Optional[str]]] = []
    source = rows if rows is not None else (windows if position and position in windows.columns else None)
    if source is not None:
        if position is None:
            raise ValueError("plot_windows: `position` names the column that places each row on the axis")
        source = _for_key(source, key) if rows is not None else source
        columns = [F.col(position).alias("p")] + ([F.col(row_label).alias("l")] if row_label else [])
        picked = source.select(*columns)
        if rows is None:
            picked = picked.distinct()
        row_data = [(r.p, _format_label(r.l) if row_label else None) for r in picked.collect() if r.p is not None]

    bounds = [b.start for b in bars] + [b.end for b in bars] + [p for p, _ in row_data]
    is_time = any(isinstance(v, datetime.datetime) for v in bounds)
    padding = 0.0 if is_time else _order_padding([axis_value(v) for v in bounds])

    lanes = max(len(bars), 1)
    figure = Figure(figsize=(9, 1.3 + 0.34 * lanes), layout="constrained")
    axes = figure.add_subplot()
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
        xs = [axis_value(p) for p, _ in row_data]
        axes.plot(xs, [0] * len(xs), "o", color="#222222", ms=5, zorder=3)
        for x, (_, text) in zip(xs, row_data):
            if text is not None:
                axes.annotate(text, (x, 0), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7)
    # Bars pin the axis to their edges (matplotlib's sticky edges), which would cut the outermost rows'
    # dots in half: set the limits with a margin instead.
    xs_all = [axis_value(b.start) - padding for b in bars] + [axis_value(b.end) + padding for b in bars] + \
        [axis_value(p) for p, _ in row_data]
    if xs_all:
        lo, hi = min(xs_all), max(xs_all)
        margin = (hi - lo) * 0.03 or 0.5
        axes.set_xlim(lo - margin, hi + margin)
    axes.set_ylim(-0.8, lanes + 0.7)
    axes.set_yticks([0] + list(range(1, len(bars) + 1)),
                    ["rows"] + [bar.kind for bar in bars], fontsize=7)
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
    kinds = sorted({bar.kind for bar in bars}, key=lambda k: _KIND_RANK.get(k, 9))
    if kinds:
        axes.legend(handles=[Patch(color=KIND_COLOURS.get(k, "#777777"), label=k) for k in kinds],
                    loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False)
    if title:
        axes.set_title(title, fontsize=10, loc="left")
    if path is not None:
        figure.savefig(path, dpi=110)
    return figure


def drawn_windows(figure: "Figure") -> list[tuple[float, float, str]]:
    """The windows a picture of :func:`plot_windows` shows, read back from its bars: ``(start, end, kind)``
    on the axis (see :func:`axis_value`), top to bottom. Tests compare them with the DataFrame's windows.

    >>> from matplotlib.figure import Figure
    >>> drawn_windows(Figure())
    []
    """
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
    return [(_tidy(start), _tidy(end), kind) for _, start, end, kind in found]


def _tidy(value: float) -> float:
    """Rounds away the float noise of drawing (bounds are whole microseconds or order values)."""
    # float(): numpy's floats (matplotlib's coordinates) print as np.float64(...) otherwise.
    rounded = float(round(float(value), 9))
    return 0.0 if rounded == 0 or math.isclose(rounded, 0.0, abs_tol=1e-12) else rounded
