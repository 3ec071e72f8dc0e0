package dev.sluice;

/** How a limiter counts a window. */
public enum Algorithm {
  /**
   * Sliding window, fixed rate (Cloudflare's counter): {@code previous × (1 − f) + current}, with
   * {@code f} the elapsed fraction of the current window. Smooth at window edges.
   */
  SLIDING_WINDOW,
  /** Fixed window: at most {@code limit} per window, counted from the window boundary. */
  FIXED_WINDOW
}
