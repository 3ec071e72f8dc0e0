/**
 * The engine: a decision's call to the store, the deny cache, local counters while the store fails,
 * the fleet's clock and size, and the verdicts written into an outcome. Not exported to
 * applications; {@link dev.sluice.engine.Engine} and {@link dev.sluice.engine.Policy} are public
 * for {@code dev.sluice.http} and {@code dev.sluice.control}, which drive it, and {@link
 * dev.sluice.engine.TwoLayer} and {@link dev.sluice.engine.TwoLayerBatch} for {@code
 * dev.sluice.twolayer}, which counts synced policies; the few others that are public say whom for.
 * The API reaches the engine through {@link dev.sluice.engine.Api}, which {@code LimiterBuilder}
 * sets.
 */
package dev.sluice.engine;
