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
from pyspark.sql import functions as F

from streamwin import windows
from streamwin.plot import axis_value, drawn_windows, plot_windows

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


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_page_examples_print_what_the_page_shows(page: Path, spark, tmp_path: Path) -> None:
    run = make_pictures.run_page(page, spark, tmp_path)
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
