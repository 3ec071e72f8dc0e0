/**
 * The fleet's control plane for background work and operators: {@link dev.sluice.control.Throttles}
 * (Close's throttles, counted in the store), the {@link dev.sluice.control.Knobs} every instance
 * reads from the store through a {@link dev.sluice.control.KnobWatcher} (a kill switch, each rule's
 * limit and shadow, each throttle's rate), and the {@link dev.sluice.control.Governor} that steers
 * a throttle's rate from a load signal. The PID controller and the governor's lease are
 * package-private.
 */
package dev.sluice.control;
