"""Kafka end to end: examples/kafka_sensors.py against a real Kafka broker (KRaft, single node, from Maven)
through Spark's Kafka connector. The stream's windows equal the batch windows of the same query on the
same records, and a query stopped mid-stream and restarted from its checkpoint loses and doubles nothing.

The broker and the connector come from bin/kafka-jars (bin/setup runs it). Where they cannot be fetched
the tests are skipped, saying why; on CI (CI=true) they fail instead.
"""

from __future__ import annotations

import datetime
import doctest
import importlib.util
import json
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Callable, Iterator

import pyspark
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import streamwin as sw
from kafka_broker import KafkaBroker, kafka_jars

# Slow: CI runs it on the default line only (pytest.ini).
pytestmark = pytest.mark.default_line

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("kafka_sensors", ROOT / "examples" / "kafka_sensors.py")
kafka_sensors = importlib.util.module_from_spec(_spec)
sys.modules["kafka_sensors"] = kafka_sensors
_spec.loader.exec_module(kafka_sensors)  # type: ignore[union-attr]

SENSORS = [f"s{i}" for i in range(6)]
PARTITIONS = 3
START = datetime.datetime(2026, 1, 1, 9, 0, 0, tzinfo=datetime.timezone.utc)


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    jars = kafka_jars(pyspark.__version__)
    if jars.problem:
        message = f"NO KAFKA JARS, the Kafka end-to-end test cannot run: {jars.problem}"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    broker = KafkaBroker(jars.broker, tmp_path_factory.mktemp("kafka"), partitions=PARTITIONS)
    broker.start()
    yield broker
    broker.stop()


class Readings:
    """Each sensor's readings in the order its producer sends them: mostly forward in time, with gaps that
    end sessions, readings a few seconds out of order (within the lateness) and readings a minute or two
    old (late: their session has closed)."""

    def __init__(self, seed: int) -> None:
        self.random = random.Random(seed)
        self.clock = {sensor: START + datetime.timedelta(seconds=self.random.randrange(30)) for sensor in SENSORS}
        self.temp = {sensor: 20.0 + i for i, sensor in enumerate(SENSORS)}

    def _next(self, sensor: str) -> dict:
        step = self.random.random()
        if step < 0.08:    # late: its session closed long ago
            ts = self.clock[sensor] - datetime.timedelta(seconds=self.random.randrange(45, 120))
        elif step < 0.15:  # out of order by less than the lateness
            ts = self.clock[sensor] - datetime.timedelta(seconds=self.random.randrange(1, 8))
        else:
            gap = self.random.randrange(40, 90) if self.random.random() < 0.15 else self.random.randrange(2, 20)
            self.clock[sensor] += datetime.timedelta(seconds=gap)
            ts = self.clock[sensor]
        self.temp[sensor] = round(self.temp[sensor] + self.random.uniform(-0.5, 0.5), 1)
        return {"sensor": sensor, "ts": ts.strftime("%Y-%m-%dT%H:%M:%SZ"), "temp": self.temp[sensor]}

    def take(self, per_sensor: int) -> list[dict]:
        """The next readings of every sensor, the sensors' readings interleaved."""
        return [self._next(sensor) for _ in range(per_sensor) for sensor in SENSORS]

    def one_hour_later(self) -> list[dict]:
        """A reading of each sensor an hour after its last: it closes every window before it."""
        for sensor in SENSORS:
            self.clock[sensor] += datetime.timedelta(hours=1)
        return [{"sensor": sensor, "ts": self.clock[sensor].strftime("%Y-%m-%dT%H:%M:%SZ"), "temp": 0.0}
                for sensor in SENSORS]


def produce(spark: SparkSession, broker: KafkaBroker, topic: str, readings: list[dict]) -> None:
    """Send readings keyed by sensor, each sensor to its own partition (as a partitioner by key would),
    in list order: one task writes them, so each partition gets them in that order."""
    records = [(r["sensor"], json.dumps(r), SENSORS.index(r["sensor"]) % PARTITIONS) for r in readings]
    (spark.createDataFrame(records, "key string, value string, partition int").coalesce(1)
     .write.format("kafka").option("kafka.bootstrap.servers", broker.bootstrap_servers).option("topic", topic).save())


def wait_until(condition: Callable[[], bool], what: str, timeout: float = 120) -> None:
    """Poll `condition` until it holds; fail, naming `what`, after `timeout` seconds."""
    deadline = time.time() + timeout
    while not condition():
        assert time.time() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


def test_example_docstrings(spark) -> None:
    result = doctest.testmod(kafka_sensors, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_stream_from_kafka_equals_batch_and_a_restart_loses_and_doubles_nothing(spark, kafka, tmp_path) -> None:
    input_topic, output_topic = "readings", "sensor-windows"
    output, checkpoint = str(tmp_path / "windows"), str(tmp_path / "checkpoints")
    readings = Readings(seed=38)
    produced: list[dict] = []

    def send(batch: list[dict]) -> None:
        produce(spark, kafka, input_topic, batch)
        produced.extend(batch)

    def checkpointed(name: str, log: str) -> list[int]:
        return sorted(int(f.name) for f in (Path(checkpoint) / name / log).iterdir() if f.name.isdigit())

    # Run 1 reads what the topic holds, in micro-batches of at most 60 records, and stops.
    send(readings.take(40))
    for query in kafka_sensors.start_queries(spark, kafka.bootstrap_servers, input_topic, output_topic, output,
                                             checkpoint, available_now=True, max_offsets_per_trigger=60):
        query.awaitTermination()
    # As if the process had died after each query's last micro-batch wrote its windows, before it was
    # committed: the next start runs that micro-batch again, from the same offsets and state.
    crashed = {}
    for name in kafka_sensors.QUERIES:
        crashed[name] = checkpointed(name, "commits")[-1]
        assert crashed[name] >= 2 and checkpointed(name, "offsets")[-1] == crashed[name]
        for file in ("commits/{}", "commits/.{}.crc"):
            (Path(checkpoint) / name / file.format(crashed[name])).unlink(missing_ok=True)

    # Run 2 goes on from the checkpoints while readings keep coming, and is stopped after two micro-batches
    # with readings, whatever it does then (stop interrupts a micro-batch in progress: the next start runs
    # it again).
    send(readings.take(30))
    not_a_reading = [("s0", "not a reading", 0)]   # skipped by both windows, and counted as skipped
    spark.createDataFrame(not_a_reading, "key string, value string, partition int").write.format("kafka") \
        .option("kafka.bootstrap.servers", kafka.bootstrap_servers).option("topic", input_topic).save()
    queries = kafka_sensors.start_queries(spark, kafka.bootstrap_servers, input_topic, output_topic, output,
                                          checkpoint, trigger_interval="0 seconds", max_offsets_per_trigger=40)
    try:
        for query in queries:
            wait_until(lambda: len([p for p in query.recentProgress if p["numInputRows"] > 0]) >= 2,
                       f"{query.name} ran two micro-batches")
            query.stop()
    finally:
        for query in queries:
            query.stop()
    interrupted = {name: checkpointed(name, "offsets")[-1] for name in kafka_sensors.QUERIES
                   if checkpointed(name, "offsets")[-1] not in checkpointed(name, "commits")}

    # Run 3, through the script's command line: everything left, the hour-later readings included.
    send(readings.take(10) + readings.one_hour_later())
    kafka_sensors.main(["--bootstrap-servers", kafka.bootstrap_servers, "--input-topic", input_topic,
                        "--output-topic", output_topic, "--output", output, "--checkpoint", checkpoint,
                        "--available-now"])

    # The same windows on a batch of the same records: the replay of the finished stream.
    records = kafka_sensors.kafka_source(spark, kafka.bootstrap_servers, input_topic, stream=False)
    assert records.count() == len(produced) + len(not_a_reading)
    assert records.select("partition").distinct().count() == PARTITIONS
    batch_readings = kafka_sensors.readings_from_kafka(records)
    last_offset = {(r.sensor, r.partition): r.last for r in
                   batch_readings.groupBy("sensor", "partition").agg(F.max("offset").alias("last")).collect()}
    out_topic = (spark.read.format("kafka").option("kafka.bootstrap.servers", kafka.bootstrap_servers)
                 .option("subscribe", output_topic).option("includeHeaders", "true").load()
                 .select(F.col("key").cast("string").alias("key"), F.col("value").cast("string").alias("json"),
                         F.col("headers").cast("array<struct<key: string, value: string>>").alias("headers")))

    for name, windows in kafka_sensors.QUERIES.items():
        batch = windows(batch_readings)
        columns = batch.columns
        written_with_batch = spark.read.parquet(f"{output}/{name}")
        assert written_with_batch.select("batch_id").distinct().count() > 2
        written = written_with_batch.select(*columns)
        # What only the end of a batch outputs: a stream keeps each sensor's last session open (its
        # hour-later reading), and its incomplete count window (a batch outputs it as partial).
        batch_windows = batch.collect()
        if name == "sessions":
            still_open = [r for r in batch_windows if r.last_offset == last_offset[(r.sensor, r.partition)]]
            assert len(still_open) == len(SENSORS) and all(r.readings == 1 for r in still_open)
            assert any(r.window.kind == "late" for r in batch_windows), "the readings should have late ones"
        else:
            still_open = [r for r in batch_windows if r.window.kind == "partial"]
        closed = Counter(tuple(r) for r in batch_windows if r not in still_open)
        assert Counter(tuple(r) for r in written.collect()) == closed, f"{name}: the stream's windows are not the batch's"
        assert all(r.sensor is not None for r in batch_windows)
        assert sw.window_metrics(batch)["rowsSkipped"] == len(not_a_reading)
        # Every reading counted once: windowed (late ones passed through), or in a window still open.
        assert written.agg(F.sum("readings")).first()[0] + sum(r.readings for r in still_open) == len(produced)

        # The output topic: the same windows, keyed by sensor, at least once: each micro-batch's windows
        # once, those of a micro-batch run again twice (the run that crashed wrote them all; one that
        # stop interrupted may have written some).
        in_topic = (out_topic.where(F.exists("headers", lambda h: (h.key == "streamwin.query") & (h.value == name)))
                    .withColumn("batch_id", F.filter("headers", lambda h: h.key == "streamwin.batch")[0].value.cast("int")))
        assert in_topic.where(F.get_json_object("json", "$.sensor") != F.col("key")).count() == 0
        in_parquet = dict(written_with_batch.groupBy("batch_id").count().collect())
        in_kafka = dict(in_topic.groupBy("batch_id").count().collect())
        assert in_parquet[crashed[name]] > 0 and in_kafka[crashed[name]] == 2 * in_parquet[crashed[name]], name
        if name in interrupted:
            windows_interrupted = in_parquet.get(interrupted[name], 0)
            assert windows_interrupted <= in_kafka.get(interrupted[name], 0) <= 2 * windows_interrupted, name
        assert {b: n for b, n in in_kafka.items() if b not in (crashed[name], interrupted.get(name))} == \
            {b: n for b, n in in_parquet.items() if b not in (crashed[name], interrupted.get(name))}, name
        deduplicated = Counter(r.json for r in in_topic.select("json", "batch_id").distinct().collect())
        assert deduplicated == Counter(r.json for r in written.select(F.to_json(F.struct(*columns)).alias("json")).collect())
