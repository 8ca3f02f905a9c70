"""Runs the examples of docs/*.md and draws the docs' pictures from their real output.

    .venv/bin/python docs/make_pictures.py                 # every page: run, check, draw into docs/pictures/
    .venv/bin/python docs/make_pictures.py tumbling.md     # one page
    .venv/bin/python docs/make_pictures.py --out /tmp/pics # draw somewhere else

A page's ```python blocks run in order in one namespace (the first block is the page's setup); a
```text block right after a ```python or ```sql block is the output that block prints (for SQL: each
SELECT's rows, as ``show(truncate=False)`` prints them). ```sql blocks run statement by statement with
``spark.sql``; Scala and shell blocks are not run. A picture is an HTML comment after a block:

    <!-- picture: tumbling.png | out, readings, position="ts", label="total" -->

which calls :func:`streamwin.plot.plot_windows` with those arguments, in the page's namespace, and
writes the PNG. ``tests/test_docs.py`` runs the same code on every page (outputs must match, and each
picture's bars must be the windows of its DataFrame), into a temporary folder.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

DOCS = Path(__file__).resolve().parent
PICTURES = DOCS / "pictures"

_FENCE = re.compile(r"^```(\w*)\s*$")
_PICTURE = re.compile(r"^<!--\s*picture:\s*(?P<name>[\w.-]+\.png)\s*\|\s*(?P<args>.*?)\s*-->\s*$")


@dataclass
class Block:
    """One fenced code block of a page, with the output shown after it and the pictures drawn from it."""

    language: str
    code: str
    line: int
    output: Optional[str] = None
    pictures: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Picture:
    """A picture drawn from a page: the plot_windows arguments (the first is the windows' DataFrame)."""

    name: str
    figure: Any
    args: tuple
    kwargs: dict


@dataclass
class PageRun:
    """What running a page gave: each checked block's expected and actual output, and the pictures."""

    page: str
    outputs: list[tuple[int, str, str]] = field(default_factory=list)
    pictures: list[Picture] = field(default_factory=list)


def parse_blocks(text: str) -> list[Block]:
    """The fenced blocks of a Markdown text, each with the ```text output and picture comments after it."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    pending: Optional[Block] = None  # the last code block, until prose other than pictures follows it
    while i < len(lines):
        opening = _FENCE.match(lines[i])
        if opening:
            language, start = opening.group(1), i
            i += 1
            body = []
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            code = "\n".join(body) + "\n"
            if language == "text" and pending is not None and pending.output is None and not pending.pictures:
                pending.output = code
            else:
                pending = Block(language, code, start + 1)
                blocks.append(pending)
        else:
            picture = _PICTURE.match(lines[i].strip())
            if picture and pending is not None:
                pending.pictures.append((picture.group("name"), picture.group("args")))
            elif lines[i].strip():
                pending = None
        i += 1
    return blocks


def _normalise(output: str) -> str:
    return "\n".join(line.rstrip() for line in output.strip("\n").splitlines())


def _run_sql(spark: Any, code: str) -> None:
    for statement in [s.strip() for s in code.split(";")]:
        if not statement or all(line.strip().startswith("--") for line in statement.splitlines()):
            continue
        result = spark.sql(statement)
        if re.match(r"^(SELECT|WITH|DESCRIBE|SHOW)\b", statement, re.IGNORECASE):
            result.show(truncate=False)


def run_page(page: Path, spark: Any, picture_dir: Optional[Path] = None,
             skip: Callable[[Block], bool] = lambda block: False) -> PageRun:
    """Run a page's python and sql blocks in one namespace; collect outputs and draw its pictures.
    Blocks for which `skip` is true are not run (a Spark line without what they show)."""
    from streamwin.plot import plot_windows

    namespace: dict[str, Any] = {"__name__": f"docs.{page.stem}"}
    run = PageRun(page.name)
    for block in parse_blocks(page.read_text()):
        if block.language not in ("python", "sql") or skip(block):
            continue
        captured = io.StringIO()
        with contextlib.redirect_stdout(captured):
            try:
                if block.language == "python":
                    exec(compile(block.code, f"{page.name}:{block.line}", "exec"), namespace)
                else:
                    _run_sql(spark, block.code)
            except Exception as error:
                raise AssertionError(f"{page.name}, the {block.language} block at line {block.line} failed: {error}") from error
        if block.output is not None:
            run.outputs.append((block.line, _normalise(block.output), _normalise(captured.getvalue())))
        for name, args in block.pictures:
            namespace["_picture_arguments"] = lambda *a, **k: (a, k)
            positional, keywords = eval(f"_picture_arguments({args})", namespace)
            path = None if picture_dir is None else str(picture_dir / name)
            figure = plot_windows(*positional, path=path, **keywords)
            run.pictures.append(Picture(name, figure, positional, keywords))
    return run


def pages(names: Optional[list[str]] = None) -> list[Path]:
    """The docs pages (all of docs/*.md, or the named ones)."""
    if names:
        return [DOCS / name for name in names]
    return sorted(DOCS.glob("*.md"))


def write_outputs(page: Path, run: PageRun) -> None:
    """Replace the ```text blocks of a page by what its examples print now (to review before committing)."""
    lines = page.read_text().splitlines()
    actual = {line: out for line, _, out in run.outputs}
    blocks = parse_blocks(page.read_text())
    for block in reversed(blocks):
        if block.output is None or block.line not in actual:
            continue
        # the ```text fence is the first one after the code block's closing fence
        close = block.line + block.code.count("\n")
        open_text = next(i for i in range(close + 1, len(lines)) if lines[i].strip() == "```text")
        end_text = next(i for i in range(open_text + 1, len(lines)) if lines[i].strip() == "```")
        lines[open_text + 1:end_text] = actual[block.line].splitlines()
    page.write_text("\n".join(lines) + "\n")


def session() -> Any:
    """The docs' Spark session: local, UTC, few shuffle partitions (as the tests' session)."""
    from pyspark.sql import SparkSession

    import streamwin as sw

    builder = (SparkSession.builder.master("local[2]").appName("streamwin-docs")
               .config("spark.sql.shuffle.partitions", "4").config("spark.sql.session.timeZone", "UTC")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    spark = sw.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pages", nargs="*", help="page file names (default: every docs/*.md)")
    parser.add_argument("--out", type=Path, default=PICTURES, help="folder for the PNG files (default: docs/pictures)")
    parser.add_argument("--write-outputs", action="store_true",
                        help="rewrite the ```text blocks with what the examples print now")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    spark = session()
    failed = 0
    for page in pages(args.pages):
        run = run_page(page, spark, args.out)
        for line, expected, actual in run.outputs:
            if expected != actual:
                failed += 1
                print(f"{page.name}:{line}: the output differs\n--- shown\n{expected}\n--- printed\n{actual}", file=sys.stderr)
        if args.write_outputs:
            write_outputs(page, run)
        print(f"{page.name}: {len(run.outputs)} outputs checked, pictures: {', '.join(p.name for p in run.pictures) or '-'}")
    spark.stop()
    return 1 if failed and not args.write_outputs else 0


if __name__ == "__main__":
    sys.exit(main())
