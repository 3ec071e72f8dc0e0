/**
 * The servlet adapter: {@link dev.sluice.servlet.SluiceFilter}. Never imports the JAX-RS adapter.
 */
package dev.sluice.servlet;
