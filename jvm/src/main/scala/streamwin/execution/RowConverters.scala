package streamwin.execution

import org.apache.spark.sql.Row
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.GetColumnByOrdinal
import org.apache.spark.sql.catalyst.encoders.{AgnosticEncoder, ExpressionEncoder, RowEncoder}
import org.apache.spark.sql.catalyst.expressions.{BoundReference, CreateNamedStruct, GetStructField, KnownNotNull, KnownNullable,
  Literal}
import org.apache.spark.sql.types.StructType

/**
 * Code-generated conversions between external Rows and InternalRows, kept per executor thread across
 * tasks. transformWithState hands its processor external Rows, and the processor is deserialized anew
 * for every task of every micro-batch: made per task, each converter generated its code again (Spark's
 * code cache only saves the compile, not the generation and the analysis before it), which measured about
 * a fifth of a streaming window's reduce-side time. A converter is used by one call at a time on its
 * thread: a serializer's result is reused by its next call, so callers copy what they keep.
 */
private[streamwin] object RowConverters {
  private val MaxPerThread = 64

  private val cache = ThreadLocal.withInitial[java.util.LinkedHashMap[(String, StructType), AnyRef]](() =>
    new java.util.LinkedHashMap[(String, StructType), AnyRef](16, 0.75f, true) {
      override def removeEldestEntry(eldest: java.util.Map.Entry[(String, StructType), AnyRef]): Boolean =
        size() > MaxPerThread
    })

  private def cached[T <: AnyRef](kind: String, schema: StructType)(make: => T): T = {
    val entries = cache.get()
    val key = (kind, schema)
    val found = entries.get(key)
    if (found != null) found.asInstanceOf[T] else {
      val made = make
      entries.put(key, made)
      made
    }
  }

  def encoder(schema: StructType): ExpressionEncoder[Row] =
    ExpressionEncoder(RowEncoder.encoderFor(schema, lenient = true))

  /**
   * An encoder of `schema` whose objects are InternalRows: encoding copies one into Spark's row format,
   * decoding gives a new InternalRow (nested values copied out of the stored bytes). A value is stored as
   * the external Row encoder of the schema stores it (same schema, same bytes), while the encoder is much
   * cheaper to make: no conversion to and from external objects to analyse and generate code for.
   */
  def internalRowEncoder(schema: StructType): ExpressionEncoder[InternalRow] = {
    val value = BoundReference(0, schema, nullable = false)
    val fields = schema.fields.toSeq.zipWithIndex
    val serializer = CreateNamedStruct(fields.flatMap { case (f, i) => Seq(Literal(f.name), GetStructField(value, i, Some(f.name))) })
    // Each column states its nullability: the struct's type is asked for before the columns are resolved.
    val deserializer = CreateNamedStruct(fields.flatMap { case (f, i) =>
      val column = GetColumnByOrdinal(i, f.dataType)
      Seq(Literal(f.name), if (f.nullable) KnownNullable(column) else KnownNotNull(column))
    })
    // The Row encoder of the schema states its shape (a struct of these fields); the expressions do the work.
    new ExpressionEncoder(RowEncoder.encoderFor(schema, lenient = true).asInstanceOf[AgnosticEncoder[InternalRow]],
      serializer, deserializer)
  }

  /** External Row to InternalRow (an UnsafeRow its next call reuses). */
  def toInternal(schema: StructType): ExpressionEncoder.Serializer[Row] =
    cached("toInternal", schema)(encoder(schema).createSerializer())

  /** InternalRow to a new external Row. */
  def toExternal(schema: StructType): ExpressionEncoder.Deserializer[Row] =
    cached("toExternal", schema)(encoder(schema).resolveAndBind().createDeserializer())
}
