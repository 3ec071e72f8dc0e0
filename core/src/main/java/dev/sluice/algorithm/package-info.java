/**
 * The counting algorithms: one small class per algorithm behind {@link
 * dev.sluice.algorithm.TierLimit} (one tier under one algorithm: a window, a token bucket or a
 * concurrency limit). The engine ({@code dev.sluice.engine}) calls them, and the API ({@code
 * dev.sluice}) checks a token bucket's tier with them; they are public only for that, and the
 * module does not export the package. They read nothing of either: the package sits below both.
 */
package dev.sluice.algorithm;
