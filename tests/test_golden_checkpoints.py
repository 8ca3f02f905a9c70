"""Checkpoints users already have keep working: each golden checkpoint (tests/checkpoint_cases.py), written
by streamwin's own stateful operator with open windows in its state, is restored, continued with the rest
of its rows, and together with what it output before gives the batch result on all the rows.

A set written on one Spark line is restored on that line and every later one (upgrading Spark keeps a
checkpoint; Spark does not read a newer line's checkpoints, so an older line is not offered a newer set).
These sets are never rewritten (docs/streaming.md, Upgrades); a checkpoint of streamwin's first streaming
host, which was never released as stable, is refused at start with what to do.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession

from spark_lines import SPARK_3
from checkpoint_cases import CASES, FED_ROWS, RETIRED, batch, plain, relocate, run_to_end, source, write_json

GOLDEN = Path(__file__).parent / "golden_checkpoints"
RETIRED_FOLDER = Path(__file__).parent / "retired_checkpoints"
# Sets written on the oldest supported line (3.5), on 4.0 (the first with the state encoding conf) and on the default.
WRITTEN_ON = ["3.5", "4.0", "4.3"]


def _line(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


RESTORABLE = [(line, name) for line in WRITTEN_ON if _line(line) <= _line(pyspark.__version__) for name in CASES]


def test_every_golden_set_holds_every_case() -> None:
    for line in WRITTEN_ON:
        for name in CASES:
            meta = json.loads((GOLDEN / f"spark-{line}" / name / "case.json").read_text())
            assert meta["spark"].startswith(line + ".") and 0 < meta["written"] < len(meta["rows"])
            offsets = (GOLDEN / f"spark-{line}" / name / "checkpoint" / "offsets" / "0").read_text()
            if _line(line) >= (4, 0):  # (Spark 3.5 has one state encoding, unsaferow, and no conf naming it)
                assert f'"spark.sql.streaming.stateStore.encodingFormat":"{CASES[name].encoding}"' in offsets
    assert RESTORABLE, f"no golden checkpoint set is readable by Spark {pyspark.__version__}"


def _without_sentinel(outputs: list) -> Counter:
    return Counter(json.dumps(o) for o in outputs if o[0] != "zz")


def _restore(folder: Path, tmp_path: Path) -> tuple[dict, list[tuple]]:
    """Copies a stored case into ``tmp_path`` and writes the rows it has not read yet as two more input
    files. Returns its metadata and all its rows."""
    meta = json.loads((folder / "case.json").read_text())
    shutil.copytree(folder / "checkpoint", tmp_path / "checkpoint")
    shutil.copytree(folder / "input", tmp_path / "input")
    read_until = relocate(tmp_path / "checkpoint", meta["written_in"], tmp_path)
    rows = [tuple(r) for r in meta["rows"]]
    later = rows[meta["written"]:]
    for i, part in enumerate([later[: len(later) // 2], later[len(later) // 2:]]):
        write_json(tmp_path / "input" / f"later-{i:04d}.json", part, read_until + 1 + i)
    return meta, rows


@pytest.mark.parametrize("line,name", RESTORABLE, ids=[f"spark-{line}-{name}" for line, name in RESTORABLE])
def test_golden_checkpoint_continues_to_the_batch_result(spark: SparkSession, tmp_path: Path, line: str,
                                                         name: str) -> None:
    case = CASES[name]
    meta, rows = _restore(GOLDEN / f"spark-{line}" / name, tmp_path)

    # The checkpoint was stopped with open windows: a state row per open window of a key (or the rows a
    # sliding window keeps), and the key's record.
    held = None if SPARK_3 else spark.read.format("statestore").load(str(tmp_path / "checkpoint"))
    if held is None:
        pass  # (Spark 3.5 has no statestore reader: the continued result below shows what was held)
    elif name in FED_ROWS:
        assert held.schema["key"].dataType.fieldNames() == ["k", "part", "id", "seq"]
        assert held.where("key.part IN ('window', 'late') OR size(value.record.kept) > 0").count() >= 1
        assert held.where("key.part = 'record'").count() >= 1
    else:
        assert held.schema["key"].dataType.fieldNames() == ["k", "window_start"]
        assert held.where("key.window_start IS NOT NULL AND value.window.rows > 0").count() >= 1
        assert held.where("key.window_start IS NULL").count() >= 1

    # The session's encoding is Spark's default: the checkpoint's own (recorded there) applies.
    run_to_end(spark, case.query(source(spark, tmp_path / "input")), tmp_path / "checkpoint", tmp_path / "out")

    # The files themselves: the sink's own log begins at the restored micro-batch, not at 0.
    # It went on in the encoding it began with. (Few micro-batches: the file sink's own log begins at
    # the restored one, and could not compact at its 10th without the earlier entries.)
    newest = max((tmp_path / "checkpoint" / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    if not SPARK_3:
        assert f'"spark.sql.streaming.stateStore.encodingFormat":"{case.encoding}"' in newest.read_text()
    assert int(newest.name) < 9
    continued = [plain(r) for r in spark.read.parquet(str(tmp_path / "out" / "*.parquet")).collect()]
    assert continued, "the restored query output nothing"
    streamed = _without_sentinel(meta["output"] + continued)
    expected = [plain(r) for r in case.query(batch(spark, rows)).collect()]
    if case.closes_on_watermark:
        # The last row (another key, far later) moves the watermark past every window.
        assert streamed == _without_sentinel(expected)
    else:
        # Windows closed by rows: a stream has no end, so the windows the batch's end closes as `partial` stay open.
        assert streamed == _without_sentinel([o for o in expected if not _is_partial(o)])


def _is_partial(output: list) -> bool:
    """An output row of a window the batch's end closed (its window column says ``partial``)."""
    return any(isinstance(v, list) and len(v) == 3 and v[2] == "partial" for v in output)


# What each retired form's refusal names: the form it found.
RETIRED_FORMS = {"transformWithState-count": "transformWithState", "engine-count": "record.engine"}


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_a_checkpoint_of_a_retired_form_is_refused_at_start_saying_what_to_do(spark: SparkSession, tmp_path: Path,
                                                                             name: str) -> None:
    # Written on Spark 4.0 by streamwin's first streaming host (transformWithState, state format 2), and by
    # its own operator's first form for windows fed rows (each key's engine as one value).
    case = RETIRED[name]
    _restore(RETIRED_FOLDER / name, tmp_path)
    query = (case.query(source(spark, tmp_path / "input")).writeStream.format("parquet")
             .option("path", str(tmp_path / "out")).option("checkpointLocation", str(tmp_path / "checkpoint")).start())
    try:
        with pytest.raises(Exception) as refused:
            query.processAllAvailable()
    finally:
        query.stop()
    message = str(refused.value)
    # It names the checkpoint, the form it found, and what to do.
    assert str(tmp_path / "checkpoint") in message and RETIRED_FORMS[name] in message, message
    assert "new checkpoint location" in message and "replay the input" in message, message
    assert "sw_count" in message
    # Nothing was written from it.
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("*.parquet"))
    assert len(list((tmp_path / "checkpoint" / "commits").glob("[0-9]*"))) == 2
