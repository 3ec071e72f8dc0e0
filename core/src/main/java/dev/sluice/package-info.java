/**
 * Sluice's entry points: {@link dev.sluice.RateLimiter} and its builders, the {@link
 * dev.sluice.Decision} it returns, and the configuration types. Everything else is package-private.
 */
package dev.sluice;
