"""What the running Spark line has: tests of a feature Spark itself added later say so by these marks."""

from __future__ import annotations

import pyspark
import pytest

SPARK_3 = pyspark.__version__.startswith("3.")

#: Spark 4.0 added the `statestore` and `state-metadata` readers; Spark 3.5 cannot read state back.
needs_state_readers = pytest.mark.skipif(SPARK_3, reason="Spark 3.5 has no statestore or state-metadata reader")
