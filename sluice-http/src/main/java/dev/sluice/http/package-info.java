/**
 * Limiting HTTP requests by rules: a {@link dev.sluice.http.RuleSet} (read from a rules file or
 * built in code) is compiled into matchers and key resolvers, and a {@link
 * dev.sluice.http.RequestLimiter} decides each request against every rule that applies, in one
 * store call, and writes the rate-limit headers. Adapters (the JAX-RS and servlet filters, the
 * Spring Boot starter) translate their request into a {@link dev.sluice.http.RequestInfo} and call
 * it; the client address, forwarded headers and path spellings are resolved here once for all of
 * them.
 */
package dev.sluice.http;
