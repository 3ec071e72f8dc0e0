/**
 * The counting algorithms: one small class per algorithm behind {@link
 * dev.sluice.algorithm.WindowLimit}. The engine in {@code dev.sluice} calls them; they are public
 * only for that and carry no compatibility promise.
 */
package dev.sluice.algorithm;
