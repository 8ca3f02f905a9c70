package streamwin

import java.sql.Timestamp

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.execution.{InputAdapter, SortExec, SparkPlan, WholeStageCodegenExec}
import org.apache.spark.sql.execution.aggregate.BaseAggregateExec
import org.apache.spark.sql.execution.exchange.ShuffleExchangeExec
import org.apache.spark.sql.catalyst.expressions.aggregate.{Final, Partial}
import org.apache.spark.sql.functions._
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import streamwin.api.functions.{hopping, tumbling}
import streamwin.execution.{TimeWindowAggregateExec, TimeWindowAssignExec, TumblingWindowResultExec}

/** The physical plans streamwin chooses: pre-aggregation below the exchange, one exchange, no needless sort. */
class PlanShapeSuite extends AnyFunSuite with BeforeAndAfterAll {
  // Adaptive execution off, so the executed plan is the planned one (no AQE wrapper, no stage rewrites).
  private lazy val spark = SparkSession.builder().master("local[2]")
    .config("spark.sql.shuffle.partitions", "3").config("spark.ui.enabled", "false")
    .config("spark.sql.adaptive.enabled", "false").config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()

  override def afterAll(): Unit = spark.stop()

  private def readings: DataFrame = {
    import spark.implicits._
    (0L until 100L).map(i => (i % 3, new Timestamp(i * 1000), i)).toDF("k", "ts", "v")
  }

  private def nodes(plan: SparkPlan): Seq[SparkPlan] = plan.collect { case p => p }
  private def exchanges(plan: SparkPlan) = plan.collect { case e: ShuffleExchangeExec => e }
  /** The operator itself, without the whole-stage code generation wrappers around it. */
  private def unwrapped(plan: SparkPlan): SparkPlan = plan match {
    case w: WholeStageCodegenExec => unwrapped(w.child)
    case i: InputAdapter => unwrapped(i.child)
    case other => other
  }

  /** The aggregation directly below the only exchange is Spark's partial (map-side) one. */
  private def assertPartialBelowOneExchange(plan: SparkPlan): Unit = {
    val shuffles = exchanges(plan)
    assert(shuffles.size == 1, plan.treeString)
    unwrapped(shuffles.head.child) match {
      case partial: BaseAggregateExec => assert(partial.aggregateExpressions.forall(_.mode == Partial), plan.treeString)
      case other => fail(s"expected a partial aggregation below the exchange, got ${other.nodeName}\n${plan.treeString}")
    }
  }

  test("tumbling without policies is Spark's hash aggregation by (key, window start): no sort") {
    val df = readings.groupBy(col("k"), tumbling(col("ts"), "10 seconds")).agg(sum("v"), max("v"))
    val plan = df.queryExecution.executedPlan
    assertPartialBelowOneExchange(plan)
    assert(!nodes(plan).exists(_.isInstanceOf[SortExec]), plan.treeString)
    val result = plan.collectFirst { case r: TumblingWindowResultExec => r }.getOrElse(fail(plan.treeString))
    unwrapped(result.child) match {
      case last: BaseAggregateExec => assert(last.aggregateExpressions.forall(_.mode == Final), plan.treeString)
      case other => fail(s"expected the final aggregation under the window result, got ${other.nodeName}")
    }
    // The same windows as Spark's own window().
    val theirs = readings.groupBy(col("k"), window(col("ts"), "10 seconds")).agg(sum("v"), max("v"))
    def rows(d: DataFrame) = d.select("k", "window.start", "window.end", "sum(v)", "max(v)").collect().toSet
    assert(rows(df) == rows(theirs) && rows(df).size == 30)
  }

  test("hopping windows pre-aggregate slices below the one exchange") {
    val plan = readings.groupBy(col("k"), hopping(col("ts"), "30 seconds", "10 seconds")).agg(sum("v"))
      .queryExecution.executedPlan
    assertPartialBelowOneExchange(plan)
    assert(plan.collectFirst { case t: TimeWindowAggregateExec => t }.isDefined, plan.treeString)
  }

  test("tumbling in a select is a map over the rows: no exchange, no sort") {
    val plan = readings.select(col("v"), tumbling(col("ts"), "10 seconds")).queryExecution.executedPlan
    assert(exchanges(plan).isEmpty && !nodes(plan).exists(_.isInstanceOf[SortExec]), plan.treeString)
    assert(plan.collectFirst { case t: TimeWindowAssignExec => t }.isDefined, plan.treeString)
  }
}
