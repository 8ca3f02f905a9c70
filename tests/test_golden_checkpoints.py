"""Checkpoints users already have keep working: each golden checkpoint (tests/checkpoint_cases.py), written
by an earlier streamwin with open windows in its state, is restored, continued with the rest of its rows,
and together with what it output before gives the batch result on all the rows.

A set written on one Spark line is restored on that line and every later one (upgrading Spark keeps a
checkpoint; Spark does not read a newer line's checkpoints, so an older line is not offered a newer set).
Restoring a Spark 4.0 set on 4.3 is what caught Java-serialized engine state naming Spark classes whose
computed serial numbers differ between the lines. Cases in the Avro state encoding restore in this
session's default encoding: the checkpoint's own applies.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pyspark
import pytest
from pyspark.sql import SparkSession

from checkpoint_cases import CASES, batch, plain, relocate, run_to_end, source, write_json

GOLDEN = Path(__file__).parent / "golden_checkpoints"
# Every supported line from its first release with these checkpoints on: the oldest and the default.
WRITTEN_ON = ["4.0", "4.3"]


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
            assert f'"spark.sql.streaming.stateStore.encodingFormat":"{CASES[name].encoding}"' in offsets
    assert RESTORABLE, f"no golden checkpoint set is readable by Spark {pyspark.__version__}"


def _without_sentinel(outputs: list) -> Counter:
    return Counter(json.dumps(o) for o in outputs if o[0] != "zz")


@pytest.mark.parametrize("line,name", RESTORABLE, ids=[f"spark-{line}-{name}" for line, name in RESTORABLE])
def test_golden_checkpoint_continues_to_the_batch_result(spark: SparkSession, tmp_path: Path, line: str,
                                                         name: str) -> None:
    case = CASES[name]
    golden = GOLDEN / f"spark-{line}" / name
    meta = json.loads((golden / "case.json").read_text())
    shutil.copytree(golden / "checkpoint", tmp_path / "checkpoint")
    shutil.copytree(golden / "input", tmp_path / "input")
    read_until = relocate(tmp_path / "checkpoint", meta["written_in"], tmp_path)

    # The checkpoint was stopped with open windows: its keys' state is there to continue from.
    held = spark.read.format("statestore").option("stateVarName", case.state_variable).load(str(tmp_path / "checkpoint"))
    assert held.count() >= 1
    if case.state_variable == "engine":
        # Java-serialized engines (0xACED), as streamwin wrote them before its own layout ("SW", version).
        stored = {bytes(r[0][:3]) for r in held.select("value.value").collect()}
        assert stored == ({b"SW" + bytes([case.engine_format])} if case.engine_format else {b"\xac\xed\x00"}), stored

    rows = [tuple(r) for r in meta["rows"]]
    later = rows[meta["written"]:]
    for i, part in enumerate([later[: len(later) // 2], later[len(later) // 2:]]):
        write_json(tmp_path / "input" / f"later-{i:04d}.json", part, read_until + 1 + i)
    # The session's encoding is Spark's default: the checkpoint's own (recorded there) applies.
    run_to_end(spark, case.query(source(spark, tmp_path / "input")), tmp_path / "checkpoint", tmp_path / "out")

    # The files themselves: the sink's own log begins at the restored micro-batch, not at 0.
    # It went on in the encoding it began with. (Few micro-batches: the file sink's own log begins at
    # the restored one, and could not compact at its 10th without the earlier entries.)
    newest = max((tmp_path / "checkpoint" / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    assert f'"spark.sql.streaming.stateStore.encodingFormat":"{case.encoding}"' in newest.read_text()
    assert int(newest.name) < 9
    continued = [plain(r) for r in spark.read.parquet(str(tmp_path / "out" / "*.parquet")).collect()]
    assert continued, "the restored query output nothing"
    streamed = _without_sentinel(meta["output"] + continued)
    expected = _without_sentinel([plain(r) for r in case.query(batch(spark, rows)).collect()])
    if case.closes_on_watermark:
        # The last row (another key, far later) moves the watermark past every window.
        assert streamed == expected
    else:
        # Count windows close on their key's rows only: the batch's teardown partials stay open.
        assert not streamed - expected, "the stream output something the batch did not"
        missing = expected - streamed
        assert all(json.loads(m)[1][2] == "partial" for m in missing)
        assert sum(missing.values()) <= 3 * 2
