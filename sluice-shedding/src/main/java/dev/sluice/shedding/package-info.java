/**
 * One instance's side of load shedding (Stripe's worker-utilization shedder): {@link
 * dev.sluice.shedding.LoadShedder}, its slow controller, the {@link
 * dev.sluice.shedding.AdaptiveCapacity} it may divide by (Netflix's, from {@code
 * sluice-shedding-adaptive}, found through {@link dev.sluice.shedding.AdaptiveCapacityProvider}).
 * The HTTP rules' {@code loadShedding:} section ({@code dev.sluice.http.Shedding}, in sluice-http)
 * drives it; it knows nothing of outcomes. The incident the docs chart is the {@code sluice
 * shedding} command's simulation.
 */
package dev.sluice.shedding;
