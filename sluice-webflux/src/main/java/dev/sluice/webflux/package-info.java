/**
 * The Spring WebFlux adapter: {@link dev.sluice.webflux.SluiceWebFilter}, which decides without
 * blocking the event loop. Never imports another adapter.
 */
package dev.sluice.webflux;
