import java.nio.file.{Files, StandardCopyOption}

import scala.sys.process._

import sbt._

/**
 * Where the build finds Spark's jars for a Spark release. Every pyspark release on PyPI holds all of
 * Spark's jars (`pyspark/jars`), while Maven's repository here lacks some releases, so the build
 * compiles and tests against pyspark's jars for every line alike:
 *   1. a pyspark of that release installed in one of the repository's virtual environments
 *      (`.venv`, `.venv-spark-<release>`: what bin/setup installs for the tests), else
 *   2. the jars of the pyspark source distribution, fetched once with pip into a cache folder
 *      (`STREAMWIN_SPARK_CACHE`, default `~/.cache/streamwin/spark`) shared by every clone.
 */
object SparkReleases {
  private val scalaLibrary = """scala-library-(2\.1[23]\.\d+)\.jar""".r

  /** The `major.minor` line of a release: "4.3.0" -> "4.3". */
  def lineOf(release: String): String = release.split('.') match {
    case Array(major, minor, _*) => s"$major.$minor"
    case _ => sys.error(s"not a Spark release: '$release' (expected major.minor.patch, e.g. 4.3.0)")
  }

  /** The folder holding Spark's jars for `release`, fetching them if no environment has them. */
  def jarsFolder(root: File, release: String, log: Logger): File = {
    val installed = IO.listFiles(root, (f: File) => f.isDirectory && f.getName.startsWith(".venv")).toSeq
      .flatMap(venv => (venv / "lib" * "python3*" / "site-packages" / "pyspark" / "jars").get())
      .find(jars => coreJar(jars, release).isDefined)
    installed.getOrElse(cached(root, release, log))
  }

  /** Spark's core jar of `release` in `jars`, for whichever Scala version it was built with. */
  private def coreJar(jars: File, release: String): Option[File] =
    Seq("2.13", "2.12").map(scala => jars / s"spark-core_$scala-$release.jar").find(_.isFile)

  /** The Scala version Spark's jars were built with (the compiler must be that version). */
  def scalaVersionOf(jars: File): String =
    IO.listFiles(jars).map(_.getName).collectFirst { case scalaLibrary(version) => version }
      .getOrElse(sys.error(s"no scala-library-2.1[23].*.jar in $jars"))

  /** Spark's jars less Scala's own, which sbt provides at the same version. */
  def sparkJars(jars: File): Seq[File] =
    IO.listFiles(jars).toSeq.filter(f => f.getName.endsWith(".jar") && !f.getName.matches("scala-(library|reflect|compiler)-.*"))
      .sortBy(_.getName)

  private def cached(root: File, release: String, log: Logger): File = {
    val cacheRoot = sys.env.get("STREAMWIN_SPARK_CACHE").map(file)
      .getOrElse(file(sys.props("user.home")) / ".cache" / "streamwin" / "spark")
    val target = cacheRoot / release / "jars"
    def complete = coreJar(target, release).isDefined
    if (!complete) {
      IO.createDirectory(cacheRoot)
      // One fetch at a time per release (the cache is shared by every clone): a build that waited
      // finds the folder complete; leftovers of a build killed half way are removed.
      val lock = new java.io.RandomAccessFile(cacheRoot / s".$release.lock", "rw")
      try {
        val held = lock.getChannel.lock()
        try if (!complete) fetch(root, release, cacheRoot, target, log)
        finally held.release()
      } finally lock.close()
    }
    target
  }

  private def fetch(root: File, release: String, cacheRoot: File, target: File, log: Logger): Unit = {
    log.info(s"Fetching Spark $release's jars (pyspark $release from the Python package index) into $target")
    IO.listFiles(cacheRoot, (f: File) => f.getName.startsWith(s".tmp-$release-")).foreach(IO.delete)
    // Unpacked next to the cache folder, so the final rename stays on one file system.
    val tmp = Files.createTempDirectory(cacheRoot.toPath, s".tmp-$release-").toFile
    try {
      // The project's environment has pip; a bare system python may not.
      val python = (root / ".venv" / "bin" / "python") match {
        case venv if venv.isFile => venv.getPath
        case _ => sys.env.getOrElse("PYTHON", "python3")
      }
      val download = Seq(python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps",
        "--no-binary", ":all:", "-d", tmp.getPath, s"pyspark==$release")
      if (download.! != 0) sys.error(s"could not download pyspark==$release (${download.mkString(" ")})")
      val archive = IO.listFiles(tmp).find(_.getName.startsWith("pyspark"))
        .getOrElse(sys.error(s"pip downloaded no pyspark archive for $release"))
      val unpacked = tmp / "unpacked"
      IO.createDirectory(unpacked)
      val untar = Seq("tar", "-xzf", archive.getPath, "-C", unpacked.getPath, "--wildcards", "*/deps/jars/*.jar")
      if (untar.! != 0) sys.error(s"could not unpack Spark's jars from $archive")
      val jars = (unpacked * "pyspark-*" / "deps" / "jars").get().headOption
        .getOrElse(sys.error(s"$archive has no deps/jars folder"))
      IO.createDirectory(target.getParentFile)
      IO.delete(target) // an incomplete folder (the lock makes sure no other build is writing it)
      // A rename, so a build stopped half way never leaves a partial folder behind.
      Files.move(jars.toPath, target.toPath, StandardCopyOption.ATOMIC_MOVE)
    } finally IO.delete(tmp)
  }
}
