package streamwin.engine

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions._
import org.apache.spark.sql.catalyst.expressions.aggregate._
import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StructType}

/**
 * Evaluates any of Spark's aggregate functions generically over aggregation buffers, the way Spark's
 * own aggregation and window operators do: initialize, update with an input row, merge two buffers,
 * evaluate. Buffers are `InternalRow`s in one fixed layout (every function's buffer slots side by
 * side). Object-typed buffers (collect_list, percentile_approx, Scala `Aggregator`s) always hold the
 * deserialised object; `fromSerialized` turns a buffer read from Spark's partial aggregation into
 * that form.
 *
 * @param functions aggregate functions whose inputs are bound against `inputSchema`
 * @param filters   one FILTER (WHERE …) predicate per function, over `inputSchema` (None: no filter)
 */
class AggregateEvaluator(
    val functions: Seq[AggregateFunction],
    filters: Seq[Option[Expression]],
    inputSchema: Seq[Attribute]) {

  private val offsets: Seq[Int] = functions.scanLeft(0)(_ + _.aggBufferAttributes.size).init
  val bufferWidth: Int = functions.map(_.aggBufferAttributes.size).sum
  // Indexed: every new buffer (SpecificInternalRow) asks for their number.
  val bufferTypes: Seq[DataType] = functions.flatMap(_.aggBufferAttributes.map(_.dataType)).toIndexedSeq

  // Imperative functions evaluate their inputs themselves (so they are bound to the input schema)
  // and address their slots by offset; both buffers of a merge share the same layout.
  private val imperatives: Array[(ImperativeAggregate, Option[BasePredicate])] =
    functions.zip(offsets).zip(filters).collect {
      case ((f: ImperativeAggregate, off), filter) =>
        val bound = BindReferences.bindReference(f, AttributeSeq(inputSchema), allowFailures = true)
        (bound.withNewMutableAggBufferOffset(off).withNewInputAggBufferOffset(off),
          filter.map(p => Predicate.create(p, inputSchema)))
    }.toArray
  private val typed: Array[(TypedImperativeAggregate[_], Int)] =
    functions.zip(offsets).collect { case (t: TypedImperativeAggregate[_], off) =>
      (t.withNewMutableAggBufferOffset(off).withNewInputAggBufferOffset(off).asInstanceOf[TypedImperativeAggregate[_]], off)
    }.toArray

  /**
   * Every buffer keeps a bounded value (sum, count, min, max, averages, moments...): no object buffer
   * (collect_list, percentile, mode, Scala Aggregators) and no array or map slot, which grow with their rows.
   */
  val boundedBuffers: Boolean = {
    def bounded(t: DataType): Boolean = t match {
      case _: ArrayType | _: MapType => false
      case s: StructType => s.fields.forall(f => bounded(f.dataType))
      case _ => true
    }
    typed.isEmpty && bufferTypes.forall(bounded)
  }

  /** Some buffer slot holds an object (collect_list, percentile, Scala Aggregators): stored serialised. */
  def hasObjectBuffers: Boolean = typed.nonEmpty

  private val bufferAttrs: Seq[Attribute] = functions.flatMap(_.aggBufferAttributes)
  private val inputBufferAttrs: Seq[Attribute] = functions.flatMap(_.inputAggBufferAttributes)

  /** Expressions for every slot; imperative functions' slots get NoOp, which projections skip. */
  private def slotExpressions(perDeclarative: DeclarativeAggregate => Seq[Expression]): Seq[Expression] =
    functions.flatMap {
      case d: DeclarativeAggregate => perDeclarative(d)
      case f => f.aggBufferAttributes.map(_ => NoOp)
    }

  private val initProjection: MutableProjection =
    MutableProjection.create(slotExpressions(_.initialValues), Nil)

  private lazy val updateProjection: MutableProjection = MutableProjection.create(
    functions.zip(filters).flatMap {
      case (d: DeclarativeAggregate, Some(p)) =>
        // FILTER (WHERE p): rows failing p leave the buffer as it is.
        d.updateExpressions.zip(d.aggBufferAttributes).map { case (u, old) => If(p, u, old) }
      case (d: DeclarativeAggregate, None) => d.updateExpressions
      case (f, _) => f.aggBufferAttributes.map(_ => NoOp)
    }, bufferAttrs ++ inputSchema)

  private val mergeProjection: MutableProjection =
    MutableProjection.create(slotExpressions(_.mergeExpressions), bufferAttrs ++ inputBufferAttrs)

  private val evalProjection: MutableProjection = MutableProjection.create(
    functions.map {
      case d: DeclarativeAggregate => d.evaluateExpression
      case _ => NoOp
    }, bufferAttrs)
  private val imperativeResultIndex: Array[Int] =
    functions.zipWithIndex.collect { case (_: ImperativeAggregate, i) => i }.toArray

  private val joined = new JoinedRow

  // Windows make a buffer per row, slice or output, and Spark's SpecificInternalRow(types) maps the types to
  // slots anew each time (a tenth of a count sliding window's stream): new buffers copy the slots of templates.
  private val bufferTemplate: SpecificInternalRow = {
    val b = new SpecificInternalRow(bufferTypes)
    initialize(b)
    b
  }
  // Copied slots of primitive types hold their initial values; an object slot's value may be mutable, so
  // buffers with one are initialised again.
  private val copyIsInitialised = bufferTemplate.values.forall(!_.isInstanceOf[MutableAny])
  private val resultTemplate = new SpecificInternalRow(functions.map(_.dataType))

  private def copySlots(template: SpecificInternalRow): SpecificInternalRow = {
    val slots = new Array[MutableValue](template.values.length)
    var i = 0
    while (i < slots.length) { slots(i) = template.values(i).copy(); i += 1 }
    new SpecificInternalRow(slots)
  }

  /** A new, initialised buffer. */
  def newBuffer(): InternalRow = {
    val b = copySlots(bufferTemplate)
    if (!copyIsInitialised) initialize(b)
    b
  }

  /** A new buffer for a caller that sets every slot: its values are not initialised. */
  def blankBuffer(): InternalRow = copySlots(bufferTemplate)

  def initialize(buffer: InternalRow): Unit = {
    initProjection.target(buffer)(InternalRow.empty)
    var i = 0
    while (i < imperatives.length) { imperatives(i)._1.initialize(buffer); i += 1 }
  }

  def update(buffer: InternalRow, input: InternalRow): Unit = {
    updateProjection.target(buffer)(joined(buffer, input))
    var i = 0
    while (i < imperatives.length) {
      val (f, filter) = imperatives(i)
      if (filter.isEmpty || filter.get.eval(input)) f.update(buffer, input)
      i += 1
    }
  }

  /** buffer := buffer ⊕ other; `other` comes after `buffer` in arrival order and is not changed. */
  def merge(buffer: InternalRow, other: InternalRow): Unit = {
    mergeProjection.target(buffer)(joined(buffer, other))
    var i = 0
    while (i < imperatives.length) {
      imperatives(i)._1 match {
        case t: TypedImperativeAggregate[_] => t.mergeBuffersObjects(buffer, other)
        case f => f.merge(buffer, other)
      }
      i += 1
    }
  }

  /** Replaces the serialised form of object buffers (as Spark's partial aggregation ships them). */
  def fromSerialized(buffer: InternalRow): InternalRow = {
    var i = 0
    while (i < typed.length) {
      val t = typed(i)._1
      val off = typed(i)._2
      buffer.update(off, t.deserialize(buffer.getBinary(off)))
      i += 1
    }
    buffer
  }

  /** Replaces object buffers with their serialised form, in place (the inverse of [[fromSerialized]]). */
  def toSerialized(buffer: InternalRow): InternalRow = {
    var i = 0
    while (i < typed.length) {
      typed(i)._1.serializeAggregateBufferInPlace(buffer)
      i += 1
    }
    buffer
  }

  /** A row with one value per function. */
  def evaluate(buffer: InternalRow): InternalRow = {
    val out = copySlots(resultTemplate)
    evalProjection.target(out)(buffer)
    var i = 0
    while (i < imperativeResultIndex.length) {
      out.update(imperativeResultIndex(i), imperatives(i)._1.eval(buffer))
      i += 1
    }
    out
  }

  def functionCount: Int = functions.size

  /** Number of buffer slots before the given function's (for reading a function's buffer directly). */
  def offsetOf(functionIndex: Int): Int = offsets(functionIndex)
}
