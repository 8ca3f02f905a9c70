package streamwin

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.encoders.{ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import streamwin.execution.RowConverters

/**
 * The typed window state is stored through an encoder of InternalRows ([[RowConverters.internalRowEncoder]]);
 * checkpoints written before it stored the same schema through Spark's Row encoder. Both must store the
 * same bytes, and each must read what the other wrote.
 */
class RowConvertersSuite extends AnyFunSuite {
  private val buffer = StructType(Seq(
    StructField("f0_sum", LongType), StructField("f1_avg_sum", DoubleType), StructField("f2_dec", DecimalType(20, 3)),
    StructField("f3_min", StringType), StructField("f4_obj", BinaryType), StructField("f5_count", LongType, nullable = false)))
  private val window = StructType(Seq(
    StructField("start", LongType, nullable = false), StructField("end", LongType, nullable = false),
    StructField("tags", ArrayType(StringType)), StructField("buffer", buffer, nullable = false)))
  private val schema = StructType(Seq(
    StructField("progress", LongType, nullable = false), StructField("timer", LongType),
    StructField("windows", ArrayType(window, containsNull = false), nullable = false)))

  private val rows = Seq(
    Row(5L, null, Seq.empty),
    Row(-3L, 17L, Seq(
      Row(0L, 10L, null, Row(null, 1.5, BigDecimal("12.345").bigDecimal, "é", Array[Byte](1, 2, 3), 2L)),
      Row(10L, 20L, Seq("a", null), Row(42L, null, null, null, null, 1L)))))

  private def rowEncoder = ExpressionEncoder(RowEncoder.encoderFor(schema, lenient = true))

  test("InternalRows are stored as Spark's Row encoder stores the same values, and read back from its bytes") {
    val internal = RowConverters.internalRowEncoder(schema)
    assert(internal.schema == schema)
    val toRowBytes = rowEncoder.createSerializer()
    val toExternal = rowEncoder.resolveAndBind().createDeserializer()
    val toBytes = internal.createSerializer()
    val fromBytes = internal.resolveAndBind().createDeserializer()
    for (row <- rows) {
      val rowBytes = toRowBytes(row).asInstanceOf[UnsafeRow].copy()
      // The engine's form of the value, read from the Row encoder's bytes (a checkpoint written before).
      val value: InternalRow = fromBytes(rowBytes)
      assert(!value.isInstanceOf[UnsafeRow], "a decoded value must not point into the state store's bytes")
      assert(toBytes(value).asInstanceOf[UnsafeRow].getBytes.toSeq == rowBytes.getBytes.toSeq)
      assert(value.getLong(0) == row.getLong(0) && value.isNullAt(1) == row.isNullAt(1))
    }
    val windows = fromBytes(toRowBytes(rows(1)).copy()).getArray(2)
    assert(windows.numElements() == 2)
    val first = windows.getStruct(0, window.length).getStruct(3, buffer.length)
    assert(first.isNullAt(0) && first.getDouble(1) == 1.5 && first.getDecimal(2, 20, 3).toString == "12.345")
    assert(first.getUTF8String(3).toString == "é" && first.getBinary(4).toSeq == Seq[Byte](1, 2, 3) && first.getLong(5) == 2L)
    // Values written by the InternalRow encoder read back through the Row encoder (a checkpoint read by an older version).
    for (row <- rows) {
      val value = fromBytes(toRowBytes(row).copy())
      val written = toBytes(value).asInstanceOf[UnsafeRow].copy()
      assert(toRowBytes(toExternal(written)).asInstanceOf[UnsafeRow].getBytes.toSeq == written.getBytes.toSeq)
    }
  }
}
