package streamwin

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files

import scala.reflect.internal.util.{AbstractFileClassLoader, BatchSourceFile}
import scala.reflect.io.VirtualDirectory
import scala.tools.nsc.{Global, Settings}
import scala.tools.nsc.reporters.StoreReporter

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.types.StructType
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/**
 * Every ```scala block of docs/\*.md and README.md compiles, as the Python blocks run in
 * tests/test_docs.py, and the DataFrames it builds pass Spark's analysis.
 *
 * Each block is the body of a method of a class of its own, which declares what the pages' Scala blocks
 * assume: `spark`, a SparkSession with the extension, and the input DataFrames their page builds in
 * Python, by the same names, columns and types ([[DocsScalaSnippetsSuite.Inputs]]). All blocks compile
 * in one run of one in-process compiler (the test JVM's Scala, on its classpath: Spark and streamwin);
 * an error is attributed to its block by the block's source name, with the page's line number. Then each
 * block runs on empty inputs: nothing is computed, but every DataFrame it defines is analyzed, so a
 * column the page does not have or a window argument streamwin refuses fails too.
 */
class DocsScalaSnippetsSuite extends AnyFunSuite with BeforeAndAfterAll {
  import DocsScalaSnippetsSuite._

  private lazy val spark = SparkSession.builder().master("local[1]")
    .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.shuffle.partitions", "1").getOrCreate()

  override def afterAll(): Unit = spark.stop()

  private val blocks: Seq[Block] = (new File(checkout, "README.md") +: pages).flatMap(Block.read)

  private lazy val compiled: Compiled = {
    val start = System.nanoTime()
    val result = compile(blocks)
    info(f"compiled ${blocks.size} blocks in ${(System.nanoTime() - start) / 1e9}%.1f s")
    result
  }

  test("the pages have Scala blocks, each importing streamwin's functions as `sw`") {
    val pagesWithBlocks = blocks.map(_.page).distinct
    assert(blocks.size >= 14 && pagesWithBlocks.size >= 14, s"found ${blocks.map(_.name)}")
    for (block <- blocks) {
      assert(block.code.contains("import streamwin.api.{functions => sw}"),
        s"${block.name} does not import streamwin.api.{functions => sw}")
      assert(!block.code.contains("streamwin.api.functions._"),
        s"${block.name} imports streamwin.api.functions._, whose count and split clash with Spark's")
    }
  }

  for (block <- blocks) test(s"${block.name} compiles and its DataFrames analyze") {
    compiled.errors.get(block.name).foreach(errors => fail(s"${block.name} does not compile:\n${errors.mkString("\n")}"))
    val inputs = Inputs.map { case (name, ddl) =>
      name -> spark.createDataFrame(java.util.Collections.emptyList[Row](), StructType.fromDDL(ddl))
    }
    val snippet = compiled.loader.loadClass(s"$Package.${block.className}")
      .getConstructor(classOf[SparkSession], classOf[String => DataFrame])
      .newInstance(spark, inputs.apply _).asInstanceOf[Runnable]
    try snippet.run()
    catch { case e: Exception => fail(s"${block.name} compiles but fails when run: $e", e) }
  }

  test("a block that does not compile fails with its page, block, line and the compiler's message") {
    val text = "# A page\n\nSome prose.\n\n```scala\nimport streamwin.api.{functions => sw}\n\n" +
      "readings.groupBy(sw.tumbling(col(\"ts\")))\n```\n\n```scala\nimport streamwin.api.{functions => sw}\n" +
      "val ok = sw.timer(\"5 seconds\")\n```\n"
    val page = Files.createTempFile("broken", ".md").toFile
    try {
      Files.write(page.toPath, text.getBytes(StandardCharsets.UTF_8))
      val broken = Block.read(page)
      val result = compile(broken)
      assert(result.errors.keySet == Set(s"${page.getName} block 1"))
      val message = result.errors(s"${page.getName} block 1").mkString("\n")
      assert(message.contains(s"${page.getName}:8:"), message)   // the page's line of the call
      assert(message.contains("not found: value col"), message)
      assert(message.contains("readings.groupBy(sw.tumbling(col(\"ts\")))"), message)
    } finally page.delete()
  }
}

object DocsScalaSnippetsSuite {
  /**
   * The DataFrames the pages' Scala blocks use, as each page builds it in Python (its name, columns and
   * types; `readings` is the same on every page that has it).
   */
  val Inputs: Map[String, String] = Map(
    "readings" -> "sensor STRING, ts TIMESTAMP, temp DOUBLE, offset BIGINT", // tumbling, hopping, ..., using
    "events" -> "event BIGINT",                                              // count-end
    "temperatures" -> "seq BIGINT, temperature DOUBLE",                      // delta
    "arrivals" -> "seq BIGINT, second BIGINT, ts TIMESTAMP",                 // interval, policies
    "lines" -> "seq BIGINT, v BIGINT, end_of_file BOOLEAN",                  // punctuation
    "statuses" -> "seq BIGINT, val DOUBLE, status STRING",                   // split
    "values" -> "seq BIGINT, val BIGINT",                                    // split (the high-water mark)
    "arrived" -> "arrived TIMESTAMP, qty BIGINT"                             // timer
  )

  private val Package = "streamwin.docsnippets"

  /** The checkout: build.sbt says where it is; else the nearest folder above the working one with build.sbt. */
  lazy val checkout: File = sys.props.get("streamwin.checkout").map(new File(_)).getOrElse {
    Iterator.iterate(new File(sys.props("user.dir")).getAbsoluteFile)(_.getParentFile).takeWhile(_ != null)
      .find(dir => new File(dir, "build.sbt").isFile && new File(dir, "docs").isDirectory)
      .getOrElse(throw new IllegalStateException(s"no checkout (build.sbt and docs/) above ${sys.props("user.dir")}"))
  }

  def pages: Seq[File] = new File(checkout, "docs").listFiles().filter(_.getName.endsWith(".md")).sortBy(_.getName).toSeq

  /** One ```scala block: its page, number on the page (from 1), first code line on the page, and code. */
  final case class Block(page: String, number: Int, firstLine: Int, code: String) {
    def name: String = s"$page block $number"
    def className: String = "Snippet_" + page.replaceAll("[^A-Za-z0-9]", "_") + "_" + number

    /** The block as the body of a class declaring `spark` and the inputs; the code starts at line [[Header]] + 1. */
    def source: String = {
      val inputs = Inputs.keys.toSeq.sorted
        .map(input => s"  private lazy val $input: org.apache.spark.sql.DataFrame = inputs(${quote(input)})").mkString("\n")
      val header =
        s"""package $Package
           |final class $className(spark: org.apache.spark.sql.SparkSession,
           |    inputs: String => org.apache.spark.sql.DataFrame) extends Runnable {
           |$inputs
           |  override def run(): Unit = {
           |""".stripMargin
      assert(header.count(_ == '\n') == Header, "Header is the wrapper's line count before the code")
      header + code + "\n  }\n}\n"
    }
  }

  /** Lines of the wrapper before a block's first line. */
  private val Header: Int = 4 + Inputs.size

  object Block {
    private val Fence = """^```(\w*)\s*$""".r

    def read(page: File): Seq[Block] = {
      val lines = new String(Files.readAllBytes(page.toPath), StandardCharsets.UTF_8).split("\n", -1).toSeq
      val blocks = Seq.newBuilder[Block]
      var open: Option[(String, Int)] = None // language, index of the first code line
      for ((line, i) <- lines.zipWithIndex) (open, line) match {
        case (None, Fence(language)) => open = Some((language, i + 1))
        case (Some((language, first)), "```") =>
          if (language == "scala") blocks += Block(page.getName, 0, first + 1, lines.slice(first, i).mkString("\n"))
          open = None
        case _ =>
      }
      blocks.result().zipWithIndex.map { case (b, n) => b.copy(number = n + 1) }
    }
  }

  private def quote(s: String): String = "\"" + s + "\""

  /** What a compilation gives: each failing block's errors (by block name), and a loader of the classes. */
  final case class Compiled(errors: Map[String, Seq[String]], loader: ClassLoader)

  /**
   * Compiles the blocks in one run. A run stops after the phase where an error occurred, so the blocks
   * that showed no error are compiled again without the failing ones, until a run has no error: every
   * block gets its own verdict, and with no error there is exactly one run.
   */
  def compile(blocks: Seq[Block]): Compiled = {
    var remaining = blocks
    var errors = Map.empty[String, Seq[String]]
    var loader: ClassLoader = getClass.getClassLoader
    var done = false
    while (!done) {
      val (runErrors, runLoader) = compileOnce(remaining)
      errors ++= runErrors
      remaining = remaining.filterNot(b => runErrors.contains(b.name))
      loader = runLoader
      done = runErrors.isEmpty || remaining.isEmpty
    }
    Compiled(errors, loader)
  }

  private def compileOnce(blocks: Seq[Block]): (Map[String, Seq[String]], ClassLoader) = {
    val settings = new Settings(message => throw new IllegalArgumentException(message))
    settings.usejavacp.value = true // the test JVM's classpath: Spark, streamwin, the Scala library
    settings.feature.value = true
    settings.deprecation.value = true
    val output = new VirtualDirectory("(memory)", None)
    settings.outputDirs.setSingleOutput(output)
    val reporter = new StoreReporter(settings)
    val global = new Global(settings, reporter)
    val byFile = blocks.map(b => b.name -> b).toMap
    val run = new global.Run
    run.compileSources(blocks.map(b => new BatchSourceFile(b.name, b.source)).toList)
    val errors = reporter.infos.toSeq.filter(_.severity == reporter.ERROR).groupBy(_.pos.source.file.name).map {
      case (file, infos) =>
        val block = byFile.getOrElse(file, throw new IllegalStateException(s"an error outside the blocks, in $file: $infos"))
        block.name -> infos.sortBy(_.pos.line).map { info =>
          val line = block.firstLine + info.pos.line - Header - 1
          val code = if (info.pos.isDefined) info.pos.lineContent.trim else ""
          s"  ${block.page}:$line: ${info.msg}\n    $code"
        }
    }
    (errors, new AbstractFileClassLoader(output, getClass.getClassLoader))
  }
}
