"""A real single-node Kafka broker (KRaft: one process is broker and controller) for the tests, and the
jars of Spark's Kafka connector for the session of the tests (conftest.py adds them to ``spark.jars``).

Both come from Maven through ``bin/kafka-jars`` (bin/setup and bin/test-wheel run it; it fetches only
what is missing), into ``target/kafka/``.
"""

from __future__ import annotations

import base64
import functools
import glob
import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
KAFKA_JARS = ROOT / "bin" / "kafka-jars"


@dataclass(frozen=True)
class KafkaJars:
    """Where bin/kafka-jars put the broker's jars and the connector's, or why it could not."""

    broker: Optional[Path]
    connector: Optional[Path]
    problem: Optional[str] = None

    @property
    def connector_jars(self) -> list[str]:
        return sorted(glob.glob(str(self.connector / "*.jar"))) if self.connector else []


@functools.lru_cache(maxsize=None)
def kafka_jars(spark_version: str) -> KafkaJars:
    """Run bin/kafka-jars for a Spark release (fetching what is missing) and read where the jars are."""
    if shutil.which("mvn") is None:
        return KafkaJars(None, None, "Maven (mvn) is not on the PATH: bin/kafka-jars cannot fetch the Kafka jars")
    try:
        done = subprocess.run([str(KAFKA_JARS), spark_version], capture_output=True, text=True, timeout=900,
                              env={k: v for k, v in os.environ.items() if k != "SPARK_VERSION"})
    except subprocess.TimeoutExpired:
        return KafkaJars(None, None, "bin/kafka-jars did not finish in 15 minutes")
    if done.returncode != 0:
        return KafkaJars(None, None, f"bin/kafka-jars {spark_version} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    folders = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    return KafkaJars(Path(folders["broker"]), Path(folders["connector"]))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class KafkaBroker:
    """One Kafka process (``kafka.Kafka``), broker and KRaft controller, on free local ports, its data
    and log under ``folder``. New topics get ``partitions`` partitions.

    Used as (tests/test_kafka.py starts one per test module)::

        broker = KafkaBroker(kafka_jars("4.3.0").broker, Path("/tmp/kafka"))
        broker.start()
        print(broker.bootstrap_servers)
        broker.stop()
    """

    def __init__(self, jars: Path, folder: Path, partitions: int = 3) -> None:
        self.jars = jars
        self.folder = folder
        self.partitions = partitions
        self.port = _free_port()
        self.controller_port = _free_port()
        self.log = folder / "broker.log"
        self._process: Optional[subprocess.Popen] = None

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _java(self, *arguments: str) -> list[str]:
        return ["java", "-Xms64m", "-Xmx512m", "-cp", str(self.jars / "*"), *arguments]

    def start(self, timeout: float = 120) -> None:
        """Format the storage, start the process, and wait until it says it started."""
        self.folder.mkdir(parents=True, exist_ok=True)
        properties = self.folder / "server.properties"
        properties.write_text("\n".join([
            "process.roles=broker,controller",
            "node.id=1",
            f"controller.quorum.voters=1@127.0.0.1:{self.controller_port}",
            f"listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.controller_port}",
            f"advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}",
            "controller.listener.names=CONTROLLER",
            "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "inter.broker.listener.name=PLAINTEXT",
            f"log.dirs={self.folder / 'data'}",
            f"num.partitions={self.partitions}",
            "offsets.topic.replication.factor=1",
            "transaction.state.log.replication.factor=1",
            "transaction.state.log.min.isr=1",
            "group.initial.rebalance.delay.ms=0",
        ]) + "\n")
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        formatted = subprocess.run(self._java("kafka.tools.StorageTool", "format", "-t", cluster_id,
                                              "-c", str(properties)), capture_output=True, text=True, timeout=120)
        assert formatted.returncode == 0, f"kafka-storage format failed:\n{formatted.stdout[-2000:]}\n{formatted.stderr[-2000:]}"
        with open(self.log, "w") as log:
            self._process = subprocess.Popen(self._java("kafka.Kafka", str(properties)), stdout=log,
                                             stderr=subprocess.STDOUT)
        deadline = time.time() + timeout
        while "Kafka Server started" not in self.log.read_text(errors="replace"):
            if self._process.poll() is not None or time.time() > deadline:
                self.stop()
                raise AssertionError(f"the Kafka broker did not start:\n{self.log.read_text(errors='replace')[-4000:]}")
            time.sleep(0.5)

    def stop(self) -> None:
        """Stop the process (it shuts down in a few seconds; killed after 30)."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None
