/**
 * The {@code sluice} command line: {@code knobs} (read and set the fleet's knobs in the store),
 * {@code bench} and {@code thresholds} (replay or generate load against rules), {@code shedding}
 * and {@code governor} (the simulations behind the load-shedding and governor charts), and {@code
 * plot}. Not a library: nothing here is API.
 */
package dev.sluice.cli;
