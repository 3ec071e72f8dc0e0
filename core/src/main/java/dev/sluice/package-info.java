/**
 * Limiting keys: {@link dev.sluice.RateLimiter} and its builders, the {@link dev.sluice.Decision}
 * and the reusable {@link dev.sluice.Outcome} it answers with, tiers and quotas, and where
 * background work runs ({@link dev.sluice.Background}). The engine lives here too, package-private:
 * the evaluator, the call, the deny cache, local and two-layer counters. {@link dev.sluice.Engine},
 * {@link dev.sluice.Policy} and {@link dev.sluice.LogGate} are public only as bridges to {@code
 * dev.sluice.http} and {@code dev.sluice.control}; applications use {@code RateLimiter} or {@code
 * dev.sluice.http.RequestLimiter} instead.
 */
package dev.sluice;
