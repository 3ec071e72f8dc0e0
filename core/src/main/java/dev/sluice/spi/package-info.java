/**
 * The store SPI: what a counter store implements. A store knows counters, not algorithms; every
 * store runs the shared contract test from core's test-jar ({@code CounterStoreContract}).
 */
package dev.sluice.spi;
