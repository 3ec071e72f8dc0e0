/** A {@link dev.sluice.spi.CounterStore} in Memcached, shared by a fleet. */
package dev.sluice.store.memcached;
