package dev.sluice.control;

import java.time.Duration;
import java.util.Objects;

/**
 * Paces work that is not an HTTP request (email processing, reindexing, webhooks): a permit at a
 * time, at a rate the fleet shares and its knobs can change at runtime. Made by {@link
 * Throttles#throttle}; thread-safe.
 *
 * <pre>{@code
 * Throttle calendars = throttles.throttle("gcal", 0.5);   // 0.5/s over 5 s windows: 3 per 5 s
 * Throttle.Permit p = calendars.tryAcquire(calendarId);
 * if (p.allowed()) { handle(notification); }
 * }</pre>
 *
 * <p>A throttle with no key is one pace for every caller; with a key, each key has its own (a
 * calendar, a customer). Several workloads share a throttle by asking {@link Throttles} for the
 * same name.
 */
public final class Throttle {

  /**
   * The answer to {@link #tryAcquire}.
   *
   * @param allowed whether the work may go ahead now
   * @param tokens permits left for this throttle (and key) until its window moves on
   * @param sleep how long until the next permit can be granted: {@link Duration#ZERO} while tokens
   *     are left; after a refusal, exactly when the refused permits would pass
   */
  public record Permit(boolean allowed, long tokens, Duration sleep) {}

  private final String name;
  private final Throttles owner;
  private volatile Throttles.Settings settings;

  Throttle(String name, Throttles owner, Throttles.Settings settings) {
    this.name = name;
    this.owner = owner;
    this.settings = settings;
  }

  /** {@return the throttle's name: its knobs are {@code throttle:NAME}} */
  public String name() {
    return name;
  }

  /** {@return the rate in force, in permits per second (after knobs); 0 stops, -1 is unlimited} */
  public double rate() {
    return settings.rate();
  }

  /** {@return the burst multiplier in force (after knobs)} */
  public double burst() {
    return settings.burst();
  }

  /** {@return the window in force} */
  public Duration window() {
    return settings.window();
  }

  Throttles.Settings settings() {
    return settings;
  }

  void settings(Throttles.Settings s) {
    this.settings = s;
  }

  /** Asks for one permit of the throttle's shared pace. Never blocks. */
  public Permit tryAcquire() {
    return tryAcquire("", 1);
  }

  /** Asks for one permit of {@code key}'s own pace. Never blocks. */
  public Permit tryAcquire(String key) {
    return tryAcquire(key, 1);
  }

  /**
   * Asks for {@code tokens} permits of {@code key}'s pace ({@code ""} for the shared one). Never
   * blocks and never throws on a store failure: the throttle fails closed by default (work waits,
   * {@link Throttles.Builder#failClosed}).
   *
   * @throws IllegalArgumentException if {@code tokens <= 0}
   */
  public Permit tryAcquire(String key, long tokens) {
    Objects.requireNonNull(key, "key");
    if (tokens <= 0) {
      throw new IllegalArgumentException("tokens must be > 0");
    }
    return owner.decide(this, settings, key, tokens);
  }

  /** Waits for one permit of the shared pace; see {@link #acquire(String, long)}. */
  public void acquire() throws InterruptedException {
    acquire("", 1);
  }

  /** Waits for one permit of {@code key}'s pace; see {@link #acquire(String, long)}. */
  public void acquire(String key) throws InterruptedException {
    acquire(key, 1);
  }

  /**
   * Takes {@code tokens} permits of {@code key}'s pace, sleeping as long as each refusal says first
   * (on the throttles' clock) and asking again: a rate knob turned up takes effect at the next ask.
   *
   * @throws InterruptedException if interrupted while sleeping; no permit is taken then
   */
  public void acquire(String key, long tokens) throws InterruptedException {
    while (true) {
      Permit p = tryAcquire(key, tokens);
      if (p.allowed()) {
        return;
      }
      owner.sleep(p.sleep());
    }
  }

  @Override
  public String toString() {
    return "throttle " + name + " " + settings;
  }
}
