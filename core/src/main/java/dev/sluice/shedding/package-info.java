/**
 * One instance's side of load shedding (Stripe's worker-utilization shedder): {@link
 * dev.sluice.shedding.LoadShedder}, its slow controller, an adaptive capacity from Netflix's
 * concurrency-limits, and {@link dev.sluice.shedding.SheddingSimulation}, the incident the docs
 * chart. The HTTP rules' {@code loadShedding:} section ({@code dev.sluice.http.Shedding}) drives
 * it; it knows nothing of outcomes.
 */
package dev.sluice.shedding;
