/** Micrometer metrics for decisions (optional: needs micrometer-core). */
package dev.sluice.micrometer;
