package streamwin.engine

import java.io._

import org.apache.spark.sql.types.Decimal
import org.apache.spark.unsafe.types.UTF8String

/**
 * The stored form of a [[KeyedWindowOperator]]'s state (windows fed rows, see
 * [[streamwin.execution.StoredEngines]]): a magic number and a format version, the fingerprint of the
 * query's [[StoredStateShape]], then its counters, its [[InMemoryWindowState]] (progress, the family's record, open windows, late
 * groups, kept rows and slices), each window with its bounds, flags, first and last order values and
 * contents. Aggregation buffers are written packed ([[AggregateEvaluator.writePacked]]: Spark's
 * UnsafeRow bytes, object buffers in their own serialised form), rows as UnsafeRow bytes, values
 * with a type tag ([[StoredValues]]).
 *
 * Not a stable form yet (these windows' state moves to a state row per window and kept row); a version
 * this one cannot read is refused with a message asking for a new checkpoint.
 */
private[engine] object StoredEngineFormat {
  /** Not the first bytes of a Java serialization stream (0xACED). */
  val Magic: Short = 0x5357 // "SW"
  /**
   * 1: the layout; 2: the same, with the [[StoredStateShape]] fingerprint after the version; 3: rows of bags
   * are state rows of their own ([[StoredBags]]), the engine holds their ranges.
   */
  val Version: Byte = 3

  final class UnknownForm(message: String) extends IOException(message)
  /** The state was written for another [[StoredStateShape]]. */
  final class OtherShape extends IOException("window state of another shape")

  private object ContentsTag {
    val None: Byte = 0
    val Buffer: Byte = 1
    val Fifo: Byte = 2
    val Rows: Byte = 3
    val Absent: Byte = -1
  }

  private object RecordTag {
    val Absent: Byte = 0
    val Count: Byte = 1
    val RowCount: Byte = 2
    val Data: Byte = 3
    val CutSession: Byte = 4
  }

  /**
   * Packages of a user's code the engine runs (a split trigger and its initial state), whose classes its
   * state may hold. Not Java's, Scala's or Spark's own (a state that is a Scala tuple does not admit all of
   * `scala`): their value classes are admitted one by one ([[StoredClassFilter]]).
   */
  def userPackages(engine: RowWindowEngine): Seq[String] = engine match {
    case op: KeyedWindowOperator => op.family.userClasses.map(c => Option(c.getPackageName).getOrElse(""))
      .filterNot(p => PlatformPackages.exists(root => p == root || p.startsWith(root + "."))).distinct
    case _ => Nil
  }
  private val PlatformPackages = Seq("java", "javax", "jdk", "sun", "scala", "org.apache.spark")

  def write(op: KeyedWindowOperator, out: DataOutputStream, fingerprint: Long, bags: StoredBags): Unit = {
    out.writeShort(Magic)
    out.writeByte(Version)
    out.writeLong(fingerprint)
    out.writeLong(op.emitted)
    out.writeInt(op.peak)
    out.writeLong(op.unwindowed)
    out.writeLong(op.late)
    out.writeLong(op.passed)
    out.writeLong(op.heldRows)
    out.writeLong(op.quietSince)
    out.writeBoolean(op.lateRow)
    val state = op.state.asInstanceOf[InMemoryWindowState]
    if (state.hasTimestampSlices) throw new IllegalStateException("a stream feeds sliding windows rows: timestamp slices are not stored")
    if (state.hasSharedSlices) throw new IllegalStateException("shared slices are state rows of their own (StoredSliceWindows)")
    out.writeLong(state.progress)
    out.writeBoolean(state.lastClosedStart.isDefined)
    state.lastClosedStart.foreach(out.writeLong)
    // Bags' rows go to the store as the bags are written; their ids come from the key's counter, written last.
    bags.startEncode(keptBags(state))
    val body = new ByteArrayOutputStream
    val rest = new DataOutputStream(body)
    writeRecord(state.record, rest, userPackages(op), bags)
    writeEntries(state.openWindows, rest, bags)
    writeEntries(state.lateGroups, rest, bags)
    val kept = state.keptBags
    rest.writeInt(kept.size)
    kept.foreach { case (time, bag) => rest.writeLong(time); bags.write(bag, rest) }
    rest.writeLong(state.keptCount)
    val slices = state.slicesIfAny
    rest.writeBoolean(slices != null)
    if (slices != null) slices.writeState(rest)
    rest.close()
    out.writeLong(bags.nextId)
    body.writeTo(out)
    bags.finish()
  }

  /** Every bag of rows the key holds. */
  private def keptBags(state: InMemoryWindowState): Iterator[RowBag] = {
    def bagOf(contents: WindowContents): Iterator[RowBag] = contents match {
      case c: RowContents => Iterator.single(c.bag)
      case _ => Iterator.empty
    }
    val record = state.record match {
      case r: CutSessionRecord => bagOf(r.latest)
      case _ => Iterator.empty
    }
    state.openWindows.flatMap(w => bagOf(w.contents)) ++ state.lateGroups.flatMap(g => bagOf(g.contents)) ++
      state.keptBags.iterator.map(_._2) ++ record
  }

  /** Reads format 3 (the one this version writes). */
  def read(op: KeyedWindowOperator, in: DataInputStream, userPackages: Seq[String], fingerprint: Long,
      bags: StoredBags): Unit = {
    if (in.readShort() != Magic) throw new UnknownForm("not a stored streamwin engine")
    val version = in.readByte()
    if (version != Version) throw new UnknownForm(s"stored engine format $version; this version reads $Version")
    if (in.readLong() != fingerprint) throw new OtherShape
    op.emitted = in.readLong()
    op.peak = in.readInt()
    op.unwindowed = in.readLong()
    op.late = in.readLong()
    op.passed = in.readLong()
    op.heldRows = in.readLong()
    op.quietSince = in.readLong()
    op.lateRow = in.readBoolean()
    val state = op.state.asInstanceOf[InMemoryWindowState]
    val factory = op.contents
    state.progress = in.readLong()
    state.lastClosedStart = if (in.readBoolean()) Some(in.readLong()) else None
    bags.nextId = in.readLong()
    state.record = readRecord(in, factory, userPackages, bags)
    readEntries(in, factory, bags).foreach(state.putWindow)
    readEntries(in, factory, bags).foreach(state.putLateGroup)
    val keptBags = checked(in.readInt(), in, bytesEach = 16)
    var i = 0
    while (i < keptBags) {
      val time = in.readLong()
      val bag = factory.bag()
      bags.read(bag, in)
      state.restoreKept(time, bag)
      i += 1
    }
    state.keptCount = in.readLong()
    if (in.readBoolean()) state.keptSlices.readState(in)
  }

  /** A count or length, each of whose elements takes at least a byte of what is left: else the bytes are broken. */
  def count(in: DataInputStream): Int = checked(in.readInt(), in)

  /**
   * `n`, a count or length just read, unless the bytes are broken: negative, or (stored engines, which are
   * read from a byte array) more elements of `bytesEach` than the bytes left. Guards allocations sized by it.
   */
  def checked(n: Long, in: DataInput, bytesEach: Int = 1): Int = {
    val left = in match {
      case stream: DataInputStream => stream.available().toLong
      case _ => Int.MaxValue.toLong // the Java form's stream: only the sign and the range are checked
    }
    if (n < 0 || n > Int.MaxValue || n * bytesEach > left) throw new UnknownForm(s"a count of $n with $left bytes left")
    n.toInt
  }

  private def writeEntries(entries: Iterator[WindowEntry], out: DataOutputStream, bags: StoredBags): Unit = {
    val all = entries.toVector
    out.writeInt(all.size)
    all.foreach { w =>
      out.writeLong(w.start)
      out.writeLong(w.end)
      out.writeLong(w.held)
      out.writeBoolean(w.fired)
      out.writeBoolean(w.changed)
      StoredValues.write(w.first, out)
      StoredValues.write(w.last, out)
      writeContents(w.contents, out, bags)
    }
  }

  private def readEntries(in: DataInputStream, factory: ContentsFactory, bags: StoredBags): Seq[WindowEntry] =
    (0 until count(in)).map { _ =>
      val start = in.readLong()
      val end = in.readLong()
      val held = in.readLong()
      val fired = in.readBoolean()
      val changed = in.readBoolean()
      val first = StoredValues.read(in, Nil)
      val last = StoredValues.read(in, Nil)
      val w = new WindowEntry(start, end, readContents(in, factory, bags))
      w.held = held
      w.fired = fired
      w.changed = changed
      w.first = first
      w.last = last
      w
    }

  private def writeContents(contents: WindowContents, out: DataOutputStream, bags: StoredBags): Unit = contents match {
    case null => out.writeByte(ContentsTag.Absent)
    case NoContents => out.writeByte(ContentsTag.None)
    case c: BufferContents =>
      out.writeByte(ContentsTag.Buffer)
      out.writeLong(c.held)
      c.evaluator.writePacked(out, Seq(c.aggregationBuffer))
    case c: FifoContents =>
      out.writeByte(ContentsTag.Fifo)
      c.fifo.writeState(out)
    case c: RowContents =>
      out.writeByte(ContentsTag.Rows)
      bags.write(c.bag, out)
  }

  private def readContents(in: DataInputStream, factory: ContentsFactory, bags: StoredBags): WindowContents =
    in.readByte() match {
    case ContentsTag.Absent => null
    case ContentsTag.None => NoContents
    case ContentsTag.Buffer =>
      val held = in.readLong()
      val contents = factory.restoredBuffer(in)
      contents.held = held
      contents
    case ContentsTag.Fifo =>
      val contents = factory.fifo().asInstanceOf[FifoContents]
      contents.fifo.readState(in)
      contents
    case ContentsTag.Rows =>
      val contents = factory.kept().asInstanceOf[RowContents]
      bags.read(contents.bag, in)
      contents
    case other => throw new UnknownForm(s"window contents of kind $other")
  }

  private def writeRecord(record: AnyRef, out: DataOutputStream, userPackages: Seq[String], bags: StoredBags): Unit =
    record match {
    case null => out.writeByte(RecordTag.Absent)
    case r: CountRecord =>
      out.writeByte(RecordTag.Count)
      out.writeLong(r.rows)
      out.writeLong(r.oldestRetained)
      out.writeLong(r.coveredUntil)
      out.writeInt(r.orders.size)
      // Order values are mostly longs (seq, offsets, timestamps): then written as such, without tags.
      val longs = r.orders.forall(_.isInstanceOf[java.lang.Long])
      out.writeBoolean(longs)
      if (longs) r.orders.foreach(o => out.writeLong(o.asInstanceOf[Long]))
      else r.orders.foreach(StoredValues.write(_, out))
    case r: RowCount =>
      out.writeByte(RecordTag.RowCount)
      out.writeLong(r.rows)
    case r: DataRecord =>
      out.writeByte(RecordTag.Data)
      out.writeInt(r.members)
      StoredValues.write(r.state, out, userPackages)
    case r: CutSessionRecord =>
      out.writeByte(RecordTag.CutSession)
      out.writeLong(r.firstTime)
      out.writeLong(r.nextCheck)
      out.writeLong(r.latestFirst)
      out.writeLong(r.latestReach)
      out.writeLong(r.latestRows)
      writeContents(r.latest, out, bags)
    case other => throw new IllegalStateException(s"no stored form for a key's record of ${other.getClass.getName}")
  }

  private def readRecord(in: DataInputStream, factory: ContentsFactory, userPackages: Seq[String],
      bags: StoredBags): AnyRef =
    in.readByte() match {
      case RecordTag.Absent => null
      case RecordTag.Count =>
        val r = new CountRecord
        r.rows = in.readLong()
        r.oldestRetained = in.readLong()
        r.coveredUntil = in.readLong()
        val n = count(in)
        r.orders = new scala.collection.mutable.ArrayDeque[Any](n)
        val longs = in.readBoolean()
        var i = 0
        while (i < n) { r.orders.append(if (longs) in.readLong() else StoredValues.read(in, Nil)); i += 1 }
        r
      case RecordTag.RowCount =>
        val r = new RowCount
        r.rows = in.readLong()
        r
      case RecordTag.Data =>
        val members = in.readInt()
        val r = new DataRecord(StoredValues.read(in, userPackages))
        r.members = members
        r
      case RecordTag.CutSession =>
        val r = new CutSessionRecord
        r.firstTime = in.readLong()
        r.nextCheck = in.readLong()
        r.latestFirst = in.readLong()
        r.latestReach = in.readLong()
        r.latestRows = in.readLong()
        r.latest = readContents(in, factory, bags)
        r
      case other => throw new UnknownForm(s"a key's record of kind $other")
    }
}

/**
 * Single values of a stored engine (order values, a data family's state) with a type tag: Spark's
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
    case other => throw new StoredEngineFormat.UnknownForm(s"a stored value of kind $other")
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
    val bytes = new Array[Byte](StoredEngineFormat.count(in))
    in.readFully(bytes)
    bytes
  }
}
