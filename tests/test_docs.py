"""The docs cannot drift from the product: every example in docs/*.md runs and prints exactly the output
the page shows, every picture is drawn by streamwin.plot from the real output of the page's example (its
bars are that DataFrame's windows), and every window function has a page."""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, functions as F

import streamwin as sw
from spark_lines import SPARK_3
from streamwin import windows
from streamwin.plot import (DROPPED_LABEL, axis_value, drawn_causes, drawn_marks, drawn_values, drawn_windows,
                            plot_windows)

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_spec = importlib.util.spec_from_file_location("make_pictures", DOCS / "make_pictures.py")
make_pictures = importlib.util.module_from_spec(_spec)
sys.modules["make_pictures"] = make_pictures  # dataclasses look their module up while it loads
_spec.loader.exec_module(make_pictures)  # type: ignore[union-attr]

PAGES = make_pictures.pages()


def _expected_windows(picture) -> list[tuple[float, float, str]]:
    """The windows of the DataFrame a picture was drawn from, on the picture's axis."""
    df = picture.args[0]
    for name, value in (picture.kwargs.get("key") or {}).items():
        df = df.where(F.col(name) == F.lit(value))
    window = picture.kwargs.get("window", "window")
    bounds = df.select(F.col(f"{window}.start").alias("s"), F.col(f"{window}.end").alias("e"),
                       F.col(f"{window}.kind").alias("k"))
    if picture.kwargs.get("position") in df.columns:  # a select: one bar per distinct window
        bounds = bounds.distinct()
    return sorted((axis_value(r.s), axis_value(r.e), r.k) for r in bounds.collect())


@pytest.mark.default_line  # (slow: CI runs the pages on the default line only)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples_print_what_the_page_shows(page: Path, spark, tmp_path: Path) -> None:
    if SPARK_3 and page.name == "state.md":
        pytest.skip("state.md reads state back with Spark 4's statestore reader (docs/install.md says so)")
    run = _run_page_leaving_settings_as_found(page, spark, tmp_path)
    for line, expected, actual in run.outputs:
        assert actual == expected, f"{page.name}:{line}: the example prints\n{actual}\nbut the page shows\n{expected}"
    for picture in run.pictures:
        png = tmp_path / picture.name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f"{picture.name} was not written as a PNG"
        drawn = sorted(drawn_windows(picture.figure))
        expected = _expected_windows(picture)
        assert len(drawn) == len(expected) > 0, picture.name
        for (s0, e0, k0), (s1, e1, k1) in zip(drawn, expected):
            assert k0 == k1 and math.isclose(s0, s1, abs_tol=1e-8) and math.isclose(e0, e1, abs_tol=1e-8), \
                f"{picture.name}: drew {(s0, e0, k0)}, the DataFrame has {(s1, e1, k1)}"
        _check_marks(picture)
        _check_causes(picture)
        _check_values(picture)
        if picture.name in _PICTURE_RULES:
            _PICTURE_RULES[picture.name](picture)


def _reads_state(block) -> bool:
    """A block that reads a stream's state back (Spark 4's readers; Spark 3.5 has none)."""
    return 'format("statestore")' in block.code or 'format("state-metadata")' in block.code


def _run_page_leaving_settings_as_found(page: Path, spark, tmp_path: Path):
    """Run a page; then put back the spark.streamwin.* settings it changed (ekuiper-sql.md sets the eKuiper
    timestamp column), so the tests after it see the session's own settings."""
    def streamwin_settings() -> dict[str, str]:
        # (SQL's SET lists them on every Spark line; RuntimeConfig.getAll is Spark 4's.)
        return {r.key: r.value for r in spark.sql("SET").collect() if r.key.startswith("spark.streamwin.")}

    before = streamwin_settings()
    try:
        return make_pictures.run_page(page, spark, tmp_path, skip=_reads_state if SPARK_3 else lambda block: False)
    finally:
        for name, value in streamwin_settings().items():
            if name not in before:
                spark.conf.unset(name)
            elif value != before[name]:
                spark.conf.set(name, before[name])


def _rows_of(picture):
    """The rows a picture drew as dots: its `rows` argument, or a select's own rows."""
    rows = picture.args[1] if len(picture.args) > 1 else picture.kwargs.get("rows", picture.args[0])
    for name, value in (picture.kwargs.get("key") or {}).items():
        rows = rows.where(F.col(name) == F.lit(value))
    return rows


def _positions(df, position: str) -> list[float]:
    return sorted({axis_value(r.p) for r in df.select(F.col(position).alias("p")).collect() if r.p is not None})


def _same_positions(drawn: list[float], expected: list[float]) -> bool:
    """Drawn positions are read back rounded (see streamwin.plot._tidy): equal within a microsecond."""
    return len(drawn) == len(expected) and all(math.isclose(a, b, abs_tol=1e-8) for a, b in zip(drawn, expected))


def _check_marks(picture) -> None:
    """Marked rows are the rows the data says: a boolean column's true rows, a DataFrame's rows, and the
    rows dropped as late are exactly the late rows (the metric's count; for a select, the rows it leaves out)."""
    drawn = drawn_marks(picture.figure)
    position = picture.kwargs.get("position")
    selections = dict(picture.kwargs.get("marks") or {})
    if "dropped" in picture.kwargs:
        selections[DROPPED_LABEL] = picture.kwargs["dropped"]
    assert set(drawn) == set(selections), f"{picture.name}: marks drawn {sorted(drawn)}"
    rows = _rows_of(picture)
    for text, selection in selections.items():
        if isinstance(selection, DataFrame):
            chosen = selection
        else:
            chosen = rows.where(F.col(selection) if isinstance(selection, str) else selection)
        assert _same_positions(drawn[text], _positions(chosen, position)), \
            f"{picture.name}: marks '{text}' drawn at {drawn[text]}, the data has {_positions(chosen, position)}"
    if "dropped" in picture.kwargs:
        windows_df = picture.args[0]
        windows_df.collect()
        late = sw.window_metrics(windows_df)["lateRowsDropped"]
        assert late > 0 and len(drawn[DROPPED_LABEL]) == late, \
            f"{picture.name}: {len(drawn[DROPPED_LABEL])} rows marked dropped, the query dropped {late}"
        if position in windows_df.columns:  # a select returns every row but the late ones
            left_out = sorted(set(_positions(rows, position)) - set(_positions(windows_df, position)))
            assert _same_positions(drawn[DROPPED_LABEL], left_out), f"{picture.name}: dropped rows {left_out}"


def _check_causes(picture) -> None:
    """Every update output is linked to exactly the row its `cause` column names."""
    cause = picture.kwargs.get("cause")
    links = drawn_causes(picture.figure)
    if cause is None:
        assert links == [], picture.name
        return
    row_id = picture.kwargs.get("row_id") or picture.kwargs["position"]
    where = {r.i: axis_value(r.p) for r in _rows_of(picture).select(
        F.col(row_id).alias("i"), F.col(picture.kwargs["position"]).alias("p")).collect()}
    window = picture.kwargs.get("window", "window")
    expected = sorted((axis_value(r.s), axis_value(r.e), r.k, where[r.c]) for r in picture.args[0].select(
        F.col(f"{window}.start").alias("s"), F.col(f"{window}.end").alias("e"), F.col(f"{window}.kind").alias("k"),
        F.col(cause).alias("c")).collect() if r.c is not None)
    assert len(links) == len(expected), f"{picture.name}: {len(links)} links, {len(expected)} outputs name a row"
    for drawn, wanted in zip(sorted(links), expected):
        assert drawn[2] == wanted[2] and all(math.isclose(a, b, abs_tol=1e-8) for a, b in
                                             zip(drawn[:2] + drawn[3:], wanted[:2] + wanted[3:])), \
            f"{picture.name}: linked {drawn}, the DataFrame has {wanted}"
    updates = [w for w in drawn_windows(picture.figure) if w[2] == "update"]
    assert len([link for link in links if link[2] == "update"]) == len(updates) > 0, \
        f"{picture.name}: every update is linked to the row that made it"


def _check_values(picture) -> None:
    """The value panel plots each row's value at its position."""
    value = picture.kwargs.get("value")
    if value is None:
        assert drawn_values(picture.figure) == [], picture.name
        return
    rows = _rows_of(picture).select(F.col(picture.kwargs["position"]).alias("p"), F.col(value).alias("v")).collect()
    points = sorted((axis_value(r.p), float(r.v)) for r in rows if r.v is not None)
    drawn = drawn_values(picture.figure)
    assert _same_positions([x for x, _ in drawn], [x for x, _ in points]) and \
        _same_positions([v for _, v in drawn], [v for _, v in points]), f"{picture.name}: values {drawn}"


# What some pictures must show, checked on what they drew (each names the rule its page states).
def _split_marks_start_windows(picture) -> None:
    """split.png: the rows where the predicate fired are the starts of every window but the first."""
    (marks,) = drawn_marks(picture.figure).values()
    starts = sorted(start for start, _, _ in drawn_windows(picture.figure))
    assert marks == starts[1:]


def _punctuations_close_windows(picture) -> None:
    """punctuation.png: a marker is in no window, and the row after each final window is a marker."""
    (marks,) = drawn_marks(picture.figure).values()
    windows_drawn = drawn_windows(picture.figure)
    positions = _positions(_rows_of(picture), picture.kwargs["position"])
    assert marks and not [m for m in marks for start, end, _ in windows_drawn if start <= m <= end]
    for _, end, kind in windows_drawn:
        if kind == "final":
            assert min(p for p in positions if p > end) in marks


def _delta_values_cut_windows(picture) -> None:
    """delta.png: a window's rows stay within its first value + threshold; the next row is above it."""
    threshold = picture.kwargs["threshold"]
    values = dict(drawn_values(picture.figure))
    for start, end, kind in drawn_windows(picture.figure):
        inside = [v for p, v in values.items() if start <= p <= end]
        assert max(inside) - values[start] <= threshold
        after = [p for p in values if p > end]
        if kind == "final":
            assert values[min(after)] - values[start] > threshold


def _updates_made_by_their_last_row(picture) -> None:
    """policy-update.png: an update is made by a row of its window (the row it just added)."""
    for start, end, kind, row in drawn_causes(picture.figure):
        assert kind == "update" and start <= row < end


def _early_updates_made_by_progress(picture) -> None:
    """policy-emit-every.png: each update is made by a row that moved progress past a multiple of 5 s."""
    rows = sorted((r.seq, r.second, axis_value(r.ts)) for r in _rows_of(picture).collect())
    crossing = {round(x, 9) for n, (_, second, x) in enumerate(rows)  # rounded as drawn positions are
                if n and second // 5 > max(s for _, s, _ in rows[:n]) // 5}
    links = drawn_causes(picture.figure)
    assert links and {round(row, 9) for _, _, _, row in links} <= crossing


def _sessions_cut_at_max_duration(picture) -> None:
    """session-max-duration.png: the sessions touch, and the cut falls on a multiple of max_duration."""
    windows_drawn = drawn_windows(picture.figure)
    assert len(windows_drawn) >= 2
    for (_, end, _), (start, _, _) in zip(windows_drawn, windows_drawn[1:]):
        assert end == start and round(end * 86400) % 10 == 0


_PICTURE_RULES = {
    "split.png": _split_marks_start_windows,
    "punctuation.png": _punctuations_close_windows,
    "delta.png": _delta_values_cut_windows,
    "policy-update.png": _updates_made_by_their_last_row,
    "policy-emit-every.png": _early_updates_made_by_progress,
    "session-max-duration.png": _sessions_cut_at_max_duration,
}


def test_picture_rules_name_drawn_pictures() -> None:
    drawn = {name for page in PAGES for block in make_pictures.parse_blocks(page.read_text()) for name, _ in block.pictures}
    assert set(_PICTURE_RULES) <= drawn


def test_pictures_label_rows_by_second() -> None:
    """One convention: a picture that labels its rows labels them by their event time's second, as the
    captions and the bars' lists name rows (the arrival order is `seq`, named in the text)."""
    for page in PAGES:
        for block in make_pictures.parse_blocks(page.read_text()):
            for name, args in block.pictures:
                found = re.search(r'row_label="(\w+)"', args)
                assert found is None or found.group(1) == "second", f"{page.name}: {name} labels rows by {found.group(1)}"


def test_readme_examples_run(spark) -> None:
    run = make_pictures.run_page(ROOT / "README.md", spark)
    assert run.outputs == [] and run.pictures == []


def test_every_picture_is_drawn_and_shown() -> None:
    drawn = {name for page in PAGES for block in make_pictures.parse_blocks(page.read_text())
             for name, _ in block.pictures}
    shown = {name for page in PAGES for name in re.findall(r"\]\(pictures/([\w.-]+\.png)\)", page.read_text())}
    committed = {p.name for p in (DOCS / "pictures").glob("*.png")} - {"benchmarks.png"}
    assert drawn == shown - {"benchmarks.png"}, "pictures shown but not drawn, or drawn but not shown"
    assert committed == drawn, "docs/pictures/ must hold exactly the drawn pictures (run docs/make_pictures.py)"
    assert "benchmarks.png" in shown and (DOCS / "pictures" / "benchmarks.png").is_file()


def test_every_window_function_has_a_page() -> None:
    titles = {page.name: page.read_text().splitlines()[0] for page in PAGES}
    for function in windows.__all__:
        pages = [name for name, title in titles.items() if title.startswith("# ") and f"`sw.{function}`" in title]
        assert pages, f"sw.{function} has no page in docs/ (its title names `sw.{function}`)"
        index = (DOCS / "index.md").read_text()
        assert all(f"({name})" in index for name in pages), f"docs/index.md does not link {pages}"


@pytest.mark.parametrize("document", [ROOT / "README.md", *PAGES], ids=lambda p: p.name)
def test_relative_links_resolve(document: Path) -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", document.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue
        path = (document.parent / target).resolve()
        assert path.exists(), f"{document.name} links {target}, which does not exist"


def test_parse_blocks_pairs_outputs_and_pictures() -> None:
    text = "\n".join([
        "```python", "print(1)", "```", "", "```text", "1", "```",
        "<!-- picture: a.png | out, rows, position=\"ts\" -->",
        "Prose ends the block.", "", "```text", "not an output", "```",
        "```sql", "SELECT 1;", "```",
    ])
    blocks = make_pictures.parse_blocks(text)
    assert [(b.language, b.output, b.pictures) for b in blocks] == [
        ("python", "1\n", [("a.png", 'out, rows, position="ts"')]),
        ("text", None, []),
        ("sql", None, []),
    ]


def test_plot_select_marks_the_rows_each_window_tags(spark, tmp_path: Path) -> None:
    df = spark.createDataFrame([(k, i) for k in ("a", "b") for i in range(5)], "k string, seq long")
    tagged = df.select("k", "seq", windows.count(3, step=2, order_by="seq", partition_by="k"))
    figure = plot_windows(tagged, position="seq", key={"k": "a"}, path=str(tmp_path / "count.png"))
    assert drawn_windows(figure) == [(0.0, 2.0, "final"), (2.0, 4.0, "final"), (4.0, 4.0, "partial")]
    members = sorted(tuple(line.get_xdata()) for line in figure.axes[0].lines if len(line.get_xdata()) and
                     line.get_ydata()[0] > 0)
    assert members == [(0.0, 1.0, 2.0), (2.0, 3.0, 4.0), (4.0,)]
    assert (tmp_path / "count.png").stat().st_size > 0
