/**
 * Limiting keys: {@link dev.sluice.RateLimiter} and its builders, the {@link dev.sluice.Decision}
 * and the reusable {@link dev.sluice.Outcome} it answers with, tiers and quotas, and where
 * background work runs ({@link dev.sluice.Background}). The engine that counts them is in {@code
 * dev.sluice.engine}, which applications do not see; {@code dev.sluice.http.RequestLimiter} limits
 * HTTP requests with the same engine.
 */
package dev.sluice;
