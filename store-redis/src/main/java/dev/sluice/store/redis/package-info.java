/** Counters, shared values and a clock in Redis, standalone, Sentinel or Cluster, via Lettuce. */
package dev.sluice.store.redis;
