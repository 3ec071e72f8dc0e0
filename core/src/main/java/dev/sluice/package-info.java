/**
 * Limiting keys: {@link dev.sluice.RateLimiter} and its builders, the {@link dev.sluice.Decision}
 * and the reusable {@link dev.sluice.Outcome} it answers with, tiers and quotas; throttles, knobs
 * and the governor for background work; load shedding. {@link dev.sluice.Engine} and {@link
 * dev.sluice.Policy} are public only so that {@code dev.sluice.http} can reach them; applications
 * use {@code RateLimiter} or {@code dev.sluice.http.RequestLimiter} instead. The algorithms, the
 * deny cache and the counters' layout are package-private.
 */
package dev.sluice;
