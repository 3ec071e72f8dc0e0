/**
 * Two-layer counting ({@link dev.sluice.Sync}, {@code sync: 200ms} in the rules file): {@link
 * dev.sluice.twolayer.TwoLayerStore} counts a synced policy's counters in this instance and {@link
 * dev.sluice.twolayer.TwoLayerSync} pushes them to the shared store once per interval, reading the
 * fleet's totals back. The engine finds it through {@link dev.sluice.twolayer.TwoLayerProvider}, a
 * service of {@code dev.sluice.engine.TwoLayer.Provider}.
 */
package dev.sluice.twolayer;
