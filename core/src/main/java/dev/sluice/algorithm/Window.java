package dev.sluice.algorithm;

/** What every window algorithm holds: its limit and its period. */
abstract class Window implements TierLimit {

  final long limit;
  final long period;

  Window(long limit, long periodMillis) {
    this.limit = limit;
    this.period = periodMillis;
  }

  @Override
  public final long limit() {
    return limit;
  }

  @Override
  public final long periodMillis() {
    return period;
  }
}
