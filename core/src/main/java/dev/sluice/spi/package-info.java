/**
 * The store SPI: what a counter store implements. A store knows counting (windows, expiry and a few
 * neutral atomic primitives), not algorithms; it answers with {@link dev.sluice.spi.Counts}. Every
 * store runs the shared contract test from core's test-jar ({@code CounterStoreContract}), and a
 * store that keeps shared values also {@code SharedValuesContract}.
 */
package dev.sluice.spi;
