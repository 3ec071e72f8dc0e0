package dev.sluice.engine;

/** A policy that applies to a decision ({@link Call}), and whom it counts. */
final class Entry {
  Policy policy;

  /** The identity counted: the one given, or its digest when that is long ({@link Call#add}). */
  String identity;

  /** The identity as given, the last time. */
  String given;

  int firstCounter;
  boolean shadowFailed;

  /**
   * The policy's deny-cache entry last found for this identity: while it lasts, a client that keeps
   * coming back to the same outcome is answered without a lookup in the shared cache. Dropped when
   * the policy or the identity changes.
   */
  DenyCache.Denial denial;
}
