package streamwin.engine

import java.io._

import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String

/**
 * Single values of a stream's window state (a data family's state) with a type tag: Spark's
 * internal values of orderable columns, and Java's boxed primitives and strings. Anything else can
 * only be a user's split trigger state (Scala API); it is written with Java serialization and read
 * back through [[StoredClassFilter]], which admits Java's and Scala's value classes and the
 * trigger's own package.
 */
private[engine] object StoredValues {
  private val Null: Byte = 0
  private val LongValue: Byte = 1
  private val IntValue: Byte = 2
  private val DoubleValue: Byte = 3
  private val StringValue: Byte = 4
  private val BooleanValue: Byte = 5
  private val FloatValue: Byte = 6
  private val ShortValue: Byte = 7
  private val ByteValue: Byte = 8
  private val DecimalValue: Byte = 9
  private val BinaryValue: Byte = 10
  private val JavaStringValue: Byte = 11
  private val UserObject: Byte = 12

  /** `userPackages`: where a user's object may come from ([[StoredClassFilter]]); it must read back now, not fail later. */
  def write(value: Any, out: DataOutputStream, userPackages: Seq[String] = Nil): Unit = value match {
    case null => out.writeByte(Null)
    case v: Long => out.writeByte(LongValue); out.writeLong(v)
    case v: Int => out.writeByte(IntValue); out.writeInt(v)
    case v: Double => out.writeByte(DoubleValue); out.writeDouble(v)
    case v: UTF8String => out.writeByte(StringValue); writeBytes(v.getBytes, out)
    case v: Boolean => out.writeByte(BooleanValue); out.writeBoolean(v)
    case v: Float => out.writeByte(FloatValue); out.writeFloat(v)
    case v: Short => out.writeByte(ShortValue); out.writeShort(v)
    case v: Byte => out.writeByte(ByteValue); out.writeByte(v)
    case v: Decimal =>
      out.writeByte(DecimalValue)
      out.writeInt(v.precision)
      out.writeInt(v.scale)
      writeBytes(v.toJavaBigDecimal.unscaledValue.toByteArray, out)
    case v: Array[Byte] => out.writeByte(BinaryValue); writeBytes(v, out)
    case v: String => out.writeByte(JavaStringValue); writeBytes(v.getBytes(java.nio.charset.StandardCharsets.UTF_8), out)
    case v: java.io.Serializable =>
      val bytes = new ByteArrayOutputStream
      val objects = new ObjectOutputStream(bytes)
      objects.writeObject(v)
      objects.close()
      // Read back now through the filter that will read it: a class it refuses fails this micro-batch, by name.
      val filter = new StoredClassFilter(userPackages)
      val check = new StoredClassFilter.FilteredInput(new ByteArrayInputStream(bytes.toByteArray), filter)
      try check.readObject() catch {
        case e: InvalidClassException if filter.refused != null => throw new IllegalStateException(
          s"streamwin: a split trigger's state of ${v.getClass.getName} cannot be kept in a stream's state: it " +
            s"holds an object of ${filter.refused}. A trigger's state may be made of numbers, strings, " +
            "decimals, dates and times, Scala tuples, options and collections, Java collections, Spark Rows, " +
            "and classes of the trigger's own package or of its initial state's.", e)
      } finally check.close()
      out.writeByte(UserObject)
      writeBytes(bytes.toByteArray, out)
    case v => throw new IllegalStateException(s"streamwin cannot store a value of ${v.getClass.getName} in a stream's state")
  }

  def read(in: DataInputStream, userPackages: Seq[String]): Any = in.readByte() match {
    case Null => null
    case LongValue => in.readLong()
    case IntValue => in.readInt()
    case DoubleValue => in.readDouble()
    case StringValue => UTF8String.fromBytes(readBytes(in))
    case BooleanValue => in.readBoolean()
    case FloatValue => in.readFloat()
    case ShortValue => in.readShort()
    case ByteValue => in.readByte()
    case DecimalValue =>
      val precision = in.readInt()
      val scale = in.readInt()
      Decimal(new java.math.BigDecimal(new java.math.BigInteger(readBytes(in)), scale), precision, scale)
    case BinaryValue => readBytes(in)
    case JavaStringValue => new String(readBytes(in), java.nio.charset.StandardCharsets.UTF_8)
    case UserObject => readUserObject(readBytes(in), userPackages)
    case other => throw new StoredForm.UnknownForm(s"a stored value of kind $other")
  }

  private def readUserObject(bytes: Array[Byte], userPackages: Seq[String]): AnyRef = {
    val objects = new StoredClassFilter.FilteredInput(new ByteArrayInputStream(bytes),
      new StoredClassFilter(userPackages))
    try objects.readFiltered() finally objects.close()
  }

  private def writeBytes(bytes: Array[Byte], out: DataOutputStream): Unit = {
    out.writeInt(bytes.length)
    out.write(bytes)
  }

  private def readBytes(in: DataInputStream): Array[Byte] = {
    val bytes = new Array[Byte](StoredForm.checked(in.readInt(), in))
    in.readFully(bytes)
    bytes
  }
}
