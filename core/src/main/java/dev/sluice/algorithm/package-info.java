/**
 * The counting algorithms: one small class per algorithm behind {@link
 * dev.sluice.algorithm.TierLimit} (one tier under one algorithm: a window, a token bucket or a
 * concurrency limit). The engine in {@code dev.sluice} calls them; they are public only for that,
 * and the module does not export the package.
 */
package dev.sluice.algorithm;
