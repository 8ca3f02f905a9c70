// streamwin: Scala core built into dist/streamwin.jar (and bundled into the Python package).

// The Spark version is pinned once, in python/requirements.txt, so pip and sbt can never disagree.
val sparkVersion: String = {
  val pin = IO.readLines(file("python/requirements.txt")).map(_.trim).find(_.startsWith("pyspark=="))
  pin.map(_.stripPrefix("pyspark==")).getOrElse(sys.error("python/requirements.txt must pin pyspark==<version>"))
}

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

lazy val dist = taskKey[File]("Builds dist/streamwin.jar and copies it into the Python package.")

lazy val root = (project in file("."))
  .settings(
    name := "streamwin",
    organization := "io.streamwin",
    version := "0.1.0",
    scalaVersion := "2.13.16",
    scalacOptions ++= Seq("-deprecation", "-feature", "-unchecked", "-release", "17"),
    Compile / scalaSource := baseDirectory.value / "jvm" / "src" / "main" / "scala",
    Compile / resourceDirectory := baseDirectory.value / "jvm" / "src" / "main" / "resources",
    Test / scalaSource := baseDirectory.value / "jvm" / "src" / "test" / "scala",
    Test / resourceDirectory := baseDirectory.value / "jvm" / "src" / "test" / "resources",
    libraryDependencies ++= Seq(
      "org.apache.spark" %% "spark-sql" % sparkVersion % Provided,
      "org.scalatest" %% "scalatest" % "3.2.19" % Test
    ),
    // Spark and scala-library are on every Spark classpath already: the jar holds only our classes.
    Compile / packageBin / artifactPath := baseDirectory.value / "dist" / "streamwin.jar",
    Compile / packageBin / packageOptions += Package.ManifestAttributes("Spark-Version" -> sparkVersion),
    Test / fork := true,
    Test / parallelExecution := false,
    Test / javaOptions ++= Seq("-Xmx3g", "-Xss4m") ++ sparkJavaOptions,
    Test / testOptions += Tests.Argument(TestFrameworks.ScalaTest, "-oD"),
    dist := {
      val jar = (Compile / packageBin).value
      val bundled = baseDirectory.value / "python" / "streamwin" / "jars" / "streamwin.jar"
      // Copy only when changed: a running Spark may have the bundled jar open.
      if (!bundled.exists || !(Hash(jar) sameElements Hash(bundled))) IO.copyFile(jar, bundled)
      streams.value.log.info(s"streamwin.jar -> $jar and $bundled (Spark $sparkVersion)")
      jar
    }
  )
