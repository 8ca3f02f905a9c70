"""Draws the benchmark table as a PNG chart: streamwin's and Spark's input rows/s per case, with the ratio.

    .venv/bin/python benchmarks/chart.py benchmarks/results/latest.json benchmarks/results/latest.png

``benchmarks/run.py`` calls :func:`draw_chart` at the end of a run (``--chart PATH``; by default next to
``results/latest.json``). Needs matplotlib (in requirements-dev.txt; or ``pip install matplotlib``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Optional, Sequence, Union

STREAMWIN_COLOUR = "#2f6db5"
SPARK_COLOUR = "#b0b0b0"
FLOOR_COLOUR = "#8cbf8c"


def draw_chart(results: Union[Sequence[dict], dict], path: Path, title: Optional[str] = None) -> Path:
    """Write a horizontal bar chart of ``results`` (rows of run.py's table, or a saved run: ``{"machine": ...,
    "cases": [...]}``) to ``path`` and return it.

    Each case has two bars on a logarithmic rows/s axis, streamwin's and Spark's, and its ratio (Spark
    time / streamwin time: above 1, streamwin is faster) written at the right. A streaming case without a
    Spark equivalent has streamwin's bar alone, with its share of the floor (Spark's stateful groupBy on
    the same rows) written instead; a floor row is one bar of its own.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "chart.png"
    >>> rows = [{"case": "tumbling 10s", "rows": 1000, "streamwin_rows_per_s": 2000, "spark_rows_per_s": 1000, "ratio": 2.0}]
    >>> draw_chart(rows, out).read_bytes()[:4] == b"\\x89PNG"
    True
    >>> floor = {"case": "floor: stateless read", "rows": 1000, "streamwin_rows_per_s": 5000, "spark_rows_per_s": 1000,
    ...          "ratio": 5.0}
    >>> draw_chart(rows + [floor], out).exists()
    True
    >>> alone = {"case": "stream split", "rows": 1000, "streamwin_rows_per_s": 900, "share_of_floor": 0.9}
    >>> draw_chart(rows + [alone], out).exists()
    True
    >>> python = {"case": "delta 40 on value", "rows": 1000, "streamwin_rows_per_s": 900, "spark_rows_per_s": 100,
    ...           "ratio": 9.0, "baseline": "a Python pass over groupByKey"}
    >>> saved = {"machine": {"cores": 2, "memory_gib": 23.5, "java": "OpenJDK 17", "spark": "4.3.0",
    ...                      "date": "2026-11-27 23:59 UTC"}, "cases": rows + [python]}
    >>> draw_chart(saved, out).exists()
    True
    """
    from matplotlib.figure import Figure

    cases = list(results["cases"] if isinstance(results, dict) else results)
    if not cases:
        raise ValueError("draw_chart: no results to draw")
    figure = Figure(figsize=(9.5, 0.9 + 0.42 * len(cases)), layout="constrained")
    axes = figure.add_subplot()
    height = 0.38
    positions = range(len(cases))
    # A floor row (run.py's "floor: ...", and "stream hopping's slice floor: ...") is Spark's own rate:
    # one bar in the floor's colour, no ratio.
    floor = ["floor:" in str(row["case"]) for row in cases]
    compared = [p for p in positions if not floor[p] and "spark_rows_per_s" in cases[p]]
    alone = [p for p in positions if not floor[p] and "spark_rows_per_s" not in cases[p]]
    ours = [cases[p]["streamwin_rows_per_s"] for p in compared]
    theirs = [cases[p]["spark_rows_per_s"] for p in compared]
    by_itself = [cases[p]["streamwin_rows_per_s"] for p in alone]
    floors = [cases[p]["streamwin_rows_per_s"] for p in positions if floor[p]]
    axes.barh([p - height / 2 for p in compared], ours, height=height, color=STREAMWIN_COLOUR, label="streamwin")
    axes.barh([p + height / 2 for p in compared], theirs, height=height, color=SPARK_COLOUR, label="Spark")
    if by_itself:
        axes.barh(alone, by_itself, height=height, color=STREAMWIN_COLOUR)
    if floors:
        axes.barh([p for p in positions if floor[p]], floors, height=height, color=FLOOR_COLOUR,
                  label="Spark without windows (floor)")
    axes.set_xscale("log")
    every = ours + theirs + floors + by_itself
    top = max(every)
    axes.set_xlim(min(every) / 2, top * 6)
    for position, row in zip(positions, cases):
        if floor[position]:
            continue
        if "ratio" not in row:
            if "share_of_floor" in row:
                axes.text(top * 1.4, position, f"{row['share_of_floor']:.0%} of floor", va="center", fontsize=7,
                          color="#444444")
            continue
        ratio = row["ratio"]
        axes.text(top * 1.4, position, f"{ratio:.2f}x", va="center", fontsize=8,
                  color="#1b4f8a" if ratio >= 1 else "#a02c2c", fontweight="bold")
    # A baseline that is not Spark's own query (delta: a Python pass) is named under its case.
    # A stream case run under both changelog settings appears twice, named by its setting.
    both = len({row["changelog"] for row in cases if "changelog" in row}) > 1
    axes.set_yticks(list(positions), [row["case"] + (f", changelog {'on' if row['changelog'] else 'off'}"
                                                     if both and "changelog" in row else "")
                                      + (f"\n(grey: {row['baseline']})" if row.get("baseline") else "")
                                      for row in cases], fontsize=8)
    axes.invert_yaxis()
    axes.set_xlabel("input rows per second (log scale); ratio = Spark time / streamwin time")
    axes.grid(axis="x", which="both", color="#e4e4e4", linewidth=0.6)
    axes.set_axisbelow(True)
    # Below the axes: inside, it covered the share-of-floor texts of the last rows.
    figure.legend(*axes.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8)
    host = results.get("machine") if isinstance(results, dict) else None
    if title is None:
        sizes = sorted({row.get("rows") for row in cases if row.get("rows")})
        title = "streamwin vs Spark" + (f" ({', '.join(f'{s:,}' for s in sizes)} rows)" if sizes else "")
        if host:
            title += (f"\n{host['cores']} cores, {host['memory_gib']} GiB, {host['java']}, Spark {host['spark']}, "
                      f"{host['date']}")
    axes.set_title(title, fontsize=10, loc="left")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path, help="a results JSON written by benchmarks/run.py")
    parser.add_argument("png", type=Path, help="where to write the chart")
    parser.add_argument("--title", default=None)
    args = parser.parse_args()
    print(draw_chart(json.loads(args.results.read_text()), args.png, args.title))


if __name__ == "__main__":
    main()
