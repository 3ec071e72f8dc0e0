/** A {@link dev.sluice.spi.CounterStore} in this JVM, for a single instance. */
package dev.sluice.store.inmemory;
