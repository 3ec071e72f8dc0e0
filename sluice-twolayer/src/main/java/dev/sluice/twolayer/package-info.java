/**
 * Two-layer counting ({@link dev.sluice.Sync}, {@code sync: 200ms} in the rules file): {@code
 * TwoLayerStore} counts a synced policy's counters in this instance and {@code TwoLayerSync} pushes
 * them to the shared store once per interval, reading the fleet's totals back. The engine finds it
 * through {@link dev.sluice.twolayer.TwoLayerProvider}, a service of {@code
 * dev.sluice.engine.TwoLayer.Provider}; nothing else here is public.
 */
package dev.sluice.twolayer;
