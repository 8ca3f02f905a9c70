// streamwin: the Scala core, built into one jar per supported Spark line (dist/streamwin-spark<line>_<scala>.jar)
// and bundled into the Python package, which picks the jar matching the installed pyspark.
//
// Sources: jvm/src/{main,test}/scala is shared by every line; jvm/spark-<line>/src/{main,test}/scala holds the
// little that differs between Spark lines (internal APIs that moved). A line compiles with its own
// folder or, where it has none, the nearest older line's (4.2 and 4.3 use spark-4.1's: nothing that
// streamwin reaches changed after 4.1), and likewise jvm/parser-<line> and jvm/api-<line> (see shimFolder).
// Spark's jars come from pyspark (see project/SparkReleases.scala), or from Maven for a line's second Scala.

// The default Spark release is pinned once, in python/requirements.txt, so pip and sbt never disagree.
val pinnedRelease: String = {
  val pin = IO.readLines(file("python/requirements.txt")).map(_.trim).find(_.startsWith("pyspark=="))
  pin.map(_.stripPrefix("pyspark==")).getOrElse(sys.error("python/requirements.txt must pin pyspark==<version>"))
}

// Every supported Spark line: the release its jar is built against, and that release's Scala version.
// The default line builds against the pin; SPARK_VERSION=<release> builds and tests another release of its line.
val supportedLines: Seq[(String, (String, String))] = Seq(
  "3.5" -> ("3.5.9", "2.12.18"),
  "4.0" -> ("4.0.5", "2.13.16"),
  "4.1" -> ("4.1.4", "2.13.17"),
  "4.2" -> ("4.2.1", "2.13.18"),
  "4.3" -> (pinnedRelease, "2.13.18")
)
// Lines also built for a second Scala version, line -> that Scala: pyspark holds Spark's jars for the Scala
// of the line's default distribution only (3.5: 2.12), so these compile against Spark's artifacts from Maven.
val otherScalaBuilds: Seq[(String, String)] = Seq("3.5" -> "2.13.8")
val defaultLine: String = SparkReleases.lineOf(pinnedRelease)
val requestedRelease: Option[String] = sys.env.get("SPARK_VERSION").map(_.trim).filter(_.nonEmpty)
val selectedLine: String = {
  val line = requestedRelease.map(SparkReleases.lineOf).getOrElse(defaultLine)
  if (!supportedLines.exists(_._1 == line))
    sys.error(s"SPARK_VERSION=${requestedRelease.get}: Spark $line is not supported (supported: ${supportedLines.map(_._1).mkString(", ")})")
  line
}
def releaseOf(line: String): String =
  requestedRelease.filter(SparkReleases.lineOf(_) == line).getOrElse(supportedLines.toMap.apply(line)._1)

// Spark on Java 17 needs these in every JVM that runs it (the list Spark's own build uses).
val sparkJavaOptions = Seq(
  "-XX:+IgnoreUnrecognizedVMOptions",
  "--add-modules=jdk.incubator.vector",
  "--add-opens=java.base/java.lang=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.invoke=ALL-UNNAMED",
  "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
  "--add-opens=java.base/java.io=ALL-UNNAMED",
  "--add-opens=java.base/java.net=ALL-UNNAMED",
  "--add-opens=java.base/java.nio=ALL-UNNAMED",
  "--add-opens=java.base/java.util=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
  "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
  "--add-opens=java.base/jdk.internal.ref=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
  "--add-opens=java.base/sun.nio.cs=ALL-UNNAMED",
  "--add-opens=java.base/sun.security.action=ALL-UNNAMED",
  "--add-opens=java.base/sun.util.calendar=ALL-UNNAMED",
  "-Djdk.reflect.useDirectMethodHandle=false",
  "-Dio.netty.tryReflectionSetAccessible=true"
)

lazy val sparkRelease = settingKey[String]("The Spark release this line's jar is compiled and tested against.")
lazy val sparkJarsFolder = taskKey[File]("The folder holding that release's jars.")
lazy val dist = taskKey[File]("Builds dist/streamwin-spark<line>_<scala>.jar and bundles it into the Python package.")
lazy val distAll = taskKey[Seq[File]]("Builds the jar of every supported Spark line.")

val streamwinVersion = "0.1.0"

// The version-specific source folder of a line (main or test): its own, or the nearest older line's that
// has one. Shims that change at different lines live in folders of their own prefix (spark-: streaming
// internals, parser-: the SQL parser's interface, api-: what Spark 4 changed for good, the state store
// API, Column and the classic session), so no line needs a copy of a shim that did not change.
def shimFolder(root: File, line: String, config: String, prefix: String = "spark-"): File = {
  def number(l: String) = l.split('.').map(_.toInt) match { case Array(major, minor) => major * 1000 + minor }
  val folders = IO.listFiles(root / "jvm", (f: File) => f.getName.startsWith(prefix) && (f / "src" / config).isDirectory)
    .map(f => f.getName.stripPrefix(prefix) -> f).filter { case (l, _) => number(l) <= number(line) }
  if (folders.isEmpty) sys.error(s"no jvm/$prefix<line> source folder for Spark $line or an older line")
  folders.maxBy { case (l, _) => number(l) }._2 / "src" / config / "scala"
}

def sparkLineProject(line: String, otherScala: Option[String] = None): Project = {
  val suffix = otherScala.map(v => "_" + v.split('.').take(2).mkString).getOrElse("")
  // Spark's jars: pyspark's, for the line's own Scala; Maven's artifacts for another Scala.
  val sparkJars: Seq[Def.Setting[_]] = otherScala match {
    case None => Seq(
      sparkJarsFolder := {
        val folder = SparkReleases.jarsFolder((ThisBuild / baseDirectory).value, sparkRelease.value, streams.value.log)
        val built = SparkReleases.scalaVersionOf(folder)
        if (built != scalaVersion.value)
          sys.error(s"Spark ${sparkRelease.value} was built with Scala $built; build.sbt compiles line $line with ${scalaVersion.value}")
        folder
      },
      // Spark is provided by the cluster: on the compile and test classpaths, never in the jar.
      Compile / unmanagedJars ++= SparkReleases.sparkJars(sparkJarsFolder.value).map(Attributed.blank))
    case Some(_) => Seq(libraryDependencies += "org.apache.spark" %% "spark-sql" % sparkRelease.value % Provided)
  }
  Project(s"spark${line.filter(_.isDigit)}$suffix", file(s"target/spark-$line${suffix.replace("_", "-scala")}"))
    .settings(sparkJars: _*)
    .settings(
      target := baseDirectory.value,
      name := "streamwin",
      organization := "io.streamwin",
      version := streamwinVersion,
      scalaVersion := otherScala.getOrElse(supportedLines.toMap.apply(line)._2),
      sparkRelease := releaseOf(line),
      // The oldest Java the line runs on: Spark 3.5 still runs on Java 8 and 11, Spark 4 needs 17.
      scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", if (line.startsWith("3.")) "8" else "17"),
      Compile / unmanagedSourceDirectories ++= Seq((ThisBuild / baseDirectory).value / "jvm" / "src" / "main" / "scala", shimFolder((ThisBuild / baseDirectory).value, line, "main"),
        shimFolder((ThisBuild / baseDirectory).value, line, "main", "parser-"),
        shimFolder((ThisBuild / baseDirectory).value, line, "main", "api-")),
      Compile / unmanagedResourceDirectories += (ThisBuild / baseDirectory).value / "jvm" / "src" / "main" / "resources",
      Test / unmanagedSourceDirectories ++= Seq((ThisBuild / baseDirectory).value / "jvm" / "src" / "test" / "scala",
        shimFolder((ThisBuild / baseDirectory).value, line, "test")),
      Test / unmanagedResourceDirectories += (ThisBuild / baseDirectory).value / "jvm" / "src" / "test" / "resources",
      // The Spark line the jar is built for, checked when the extension registers, and the names of the
      // SQL functions, read from the families' declarations (`SqlWindowFunction("sw_...", ...)`) so that a
      // jar of another line can name them without loading a class compiled against its own line.
      Compile / sourceGenerators += Def.task {
        val out = (Compile / sourceManaged).value / "streamwin" / "BuildInfo.scala"
        val declaration = "SqlWindowFunction\\(\\s*\"([A-Za-z0-9_]+)\"".r
        val functionNames = (Compile / unmanagedSourceDirectories).value.flatMap(dir => (dir ** "*.scala").get)
          .flatMap(source => declaration.findAllMatchIn(IO.read(source)).map(_.group(1))).distinct.sorted
        IO.write(out,
          s"""package streamwin
             |
             |/** What this jar was built for (generated by build.sbt). */
             |object BuildInfo {
             |  val Version: String = "${version.value}"
             |  val SparkLine: String = "$line"
             |  val SparkRelease: String = "${sparkRelease.value}"
             |  val ScalaBinaryVersion: String = "${scalaBinaryVersion.value}"
             |  val SupportedLinesText: String = "${supportedLines.map(_._1).mkString(",")}"
             |  val JarsText: String = "${(supportedLines.map { case (l, (_, scala)) => l -> scala } ++ otherScalaBuilds)
                 .map { case (l, scala) => s"${l}_${scala.split('.').take(2).mkString(".")}" }.sorted.mkString(",")}"
             |  val FunctionNamesText: String = "${functionNames.mkString(",")}"
             |}
             |""".stripMargin)
        Seq(out)
      }.taskValue,
      libraryDependencies += "org.scalatest" %% "scalatest" % "3.2.19" % Test,
      // DocsScalaSnippetsSuite compiles the Scala blocks of docs/ in process, with the line's own Scala.
      libraryDependencies += "org.scala-lang" % "scala-compiler" % scalaVersion.value % Test,
      Compile / packageBin / artifactPath :=
        (ThisBuild / baseDirectory).value / "dist" / s"streamwin-spark${line}_${scalaBinaryVersion.value}.jar",
      Compile / packageBin / packageOptions += Package.ManifestAttributes(
        "Implementation-Title" -> "streamwin",
        "Implementation-Version" -> version.value,
        "Spark-Line" -> line,
        "Spark-Version" -> sparkRelease.value,
        "Scala-Binary-Version" -> scalaBinaryVersion.value
      ),
      Test / fork := true,
      Test / parallelExecution := false,
      Test / javaOptions ++= Seq("-Xmx3g", "-Xss4m") ++ sparkJavaOptions,
      // Where the checkout is, for suites that read its files (DocsScalaSnippetsSuite reads docs/ and README.md).
      Test / javaOptions += s"-Dstreamwin.checkout=${(ThisBuild / baseDirectory).value}",
      Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
      dist := {
        val jar = (Compile / packageBin).value
        val base = (ThisBuild / baseDirectory).value
        val targets = Seq(base / "python" / "streamwin" / "jars" / jar.getName) ++
          (if (line == defaultLine) Seq(base / "dist" / "streamwin.jar") else Nil)
        // Copy only when changed: a running Spark may have the bundled jar open.
        for (target <- targets if !target.exists || !(Hash(jar) sameElements Hash(target))) IO.copyFile(jar, target)
        streams.value.log.info(s"Spark ${sparkRelease.value}: $jar -> ${targets.mkString(", ")}")
        jar
      }
    )
}

lazy val spark35 = sparkLineProject("3.5")
lazy val spark35_213 = sparkLineProject("3.5", otherScalaBuilds.toMap.get("3.5"))
lazy val spark40 = sparkLineProject("4.0")
lazy val spark41 = sparkLineProject("4.1")
lazy val spark42 = sparkLineProject("4.2")
lazy val spark43 = sparkLineProject("4.3")
lazy val lineProjects = Map("3.5" -> spark35, "4.0" -> spark40, "4.1" -> spark41, "4.2" -> spark42, "4.3" -> spark43)

// The root builds nothing itself: `dist` and `test` run on the selected line (the pin's, or
// SPARK_VERSION's), `distAll` builds every line's jar (what the wheel bundles).
lazy val root = (project in file("."))
  .settings(
    name := "streamwin-build",
    publish / skip := true,
    dist := (lineProjects(selectedLine) / dist).value,
    Test / test := (lineProjects(selectedLine) / Test / test).value,
    Test / testOnly := (lineProjects(selectedLine) / Test / testOnly).evaluated,
    Compile / compile := (lineProjects(selectedLine) / Compile / compile).value,
    distAll := Seq((spark35 / dist).value, (spark35_213 / dist).value, (spark40 / dist).value, (spark41 / dist).value, (spark42 / dist).value, (spark43 / dist).value)
  )
