/**
 * The JMH benchmarks and the bare servers that {@code docs/bench} drives with {@code wrk}: each
 * benchmark runs Sluice beside its peers (Bucket4j, Resilience4j, Netflix concurrency-limits, a raw
 * store floor) in the same run. docs/BENCHMARKS.md lists the commands and the current figures.
 */
package dev.sluice.bench;
