"""Shared fixtures: one local SparkSession with streamwin, used by every test module."""

from __future__ import annotations

import os

import pyspark
import pytest
from hypothesis import HealthCheck, settings
from pyspark.sql import SparkSession

import streamwin as sw
from kafka_broker import kafka_jars

# Each example runs Spark jobs: no deadline, and a budget that keeps the whole suite within CI's time.
settings.register_profile(
    "streamwin",
    deadline=None,
    max_examples=int(os.environ.get("STREAMWIN_EXAMPLES", "8")),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    derandomize=os.environ.get("CI") == "true",
)
settings.load_profile("streamwin")


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    builder = (
        SparkSession.builder.master("local[2]")
        .appName("streamwin-tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
    )
    # Spark's Kafka connector (tests/test_kafka.py): jars load only when the session starts.
    connector = kafka_jars(pyspark.__version__).connector_jars
    if connector:
        builder = builder.config("spark.jars", ",".join(connector))
    session = sw.configure(builder).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()
