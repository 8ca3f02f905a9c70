package streamwin.engine

/*
 * The records families keep per key besides their windows ([[WindowState.record]]): the stored
 * state knows each one's form (see [[StoredWindowRows]]), so they live here, beside it.
 */

/** Where a count family is in the key's rows. */
final class CountRecord extends Serializable {
  var rows = 0L
  var oldestRetained = 0L
  // Rows below this index have been in an emitted window.
  var coveredUntil = 0L
  // The order_by values a window can still start or end with (a window's start and end are its first
  // and last row's), oldest first: the oldest retained row's, each later row's that a window starts
  // at, and the newest row's. Other rows' are not kept: count(1000000) keeps two (its open window's first
  // row is the oldest retained), not a million.
  var orders = new RingQueue[Any]
  // The row index of `orders.head` (meaningful while it is not empty).
  var headRow = 0L
  // False for a record just read from a stream's state: its `orders` may hold every retained row's
  // value (as the state of earlier versions does) until [[CountWindows]] keeps only the ones above.
  var compact = true

  def retained: Long = rows - oldestRetained
}

/** How many rows an overlapping count family has seen. */
final class RowCount extends Serializable { var rows = 0L }

/**
 * Where a data family is in the key's rows: how many rows the open window holds since it began, and
 * what the family remembers between rows (see [[DataWindowSpec.boundary]]).
 */
final class DataRecord(var state: Any) extends Serializable {
  var members = 0
}

/** What a key's cut session remembers besides its window: its first row, the next check time, and its latest slice. */
final class CutSessionRecord extends ContentsRecord with Serializable {
  var firstTime = 0L
  var nextCheck = Long.MaxValue
  var latestFirst = 0L
  var latestReach = 0L
  var latestRows = 0L
  var latest: WindowContents = _
  override def release(): Unit = if (latest != null) { latest.clear(); latest = null }
}
