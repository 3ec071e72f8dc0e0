/**
 * The JAX-RS adapter: {@link dev.sluice.jaxrs.SluiceFeature} and {@link
 * dev.sluice.jaxrs.RateLimited}. Never imports the servlet adapter.
 */
package dev.sluice.jaxrs;
