package dev.sluice.control;

import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * A builder's setting for reading the fleet's {@link Knobs}: off until {@link #every}, and the
 * {@link KnobWatcher} it starts when the limiter is built. The one place every builder whose
 * limiter follows knobs ({@code RequestLimiter}, {@link Throttles}) keeps it. Not thread-safe, as a
 * builder.
 */
public final class KnobRefresh {

  /** How often to read the knobs; null: they are not read. */
  private Duration refresh;

  public KnobRefresh() {}

  /**
   * Reads the knobs every {@code refresh} ({@link KnobWatcher#DEFAULT_REFRESH} is a good default).
   * {@code values} is the store's, checked for here so that a store keeping none fails the
   * builder's call rather than the build.
   *
   * @throws IllegalArgumentException if {@code refresh} is not positive
   */
  public void every(Supplier<SharedValues> values, Duration refresh) {
    Objects.requireNonNull(values.get(), "values");
    this.refresh = KnobWatcher.checkRefresh(refresh);
  }

  /**
   * Starts reading the knobs from {@code values} on {@code scheduler}, telling {@code listener} of
   * each change; empty when they are not read.
   */
  public Optional<KnobWatcher> start(
      Supplier<SharedValues> values, ScheduledExecutorService scheduler, Consumer<Knobs> listener) {
    if (refresh == null) {
      return Optional.empty();
    }
    KnobWatcher w = KnobWatcher.start(values.get(), refresh, scheduler);
    w.listen(listener);
    return Optional.of(w);
  }
}
