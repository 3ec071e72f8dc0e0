/**
 * One instance's side of load shedding (Stripe's worker-utilization shedder): {@link
 * dev.sluice.shedding.LoadShedder}, its slow controller, the {@link
 * dev.sluice.shedding.AdaptiveCapacity} it may divide by (Netflix's, from {@code
 * sluice-shedding-adaptive}, found through {@link dev.sluice.shedding.AdaptiveCapacityProvider}),
 * and {@link dev.sluice.shedding.SheddingSimulation}, the incident the docs chart. The HTTP rules'
 * {@code loadShedding:} section ({@code dev.sluice.http.Shedding}) drives it; it knows nothing of
 * outcomes.
 */
package dev.sluice.shedding;
