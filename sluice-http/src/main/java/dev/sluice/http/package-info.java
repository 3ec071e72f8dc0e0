/**
 * Limiting HTTP requests by rules: a {@link dev.sluice.http.RuleSet} (read from a rules file or
 * built in code) is compiled into matchers and key resolvers, and a {@link
 * dev.sluice.http.RequestLimiter} decides each request against every rule that applies, in one
 * store call. Adapters (the JAX-RS, servlet and WebFlux filters, the gRPC interceptor) translate
 * their request into a {@link dev.sluice.http.RequestInfo}, call {@link
 * dev.sluice.http.Admission#decide}, write the headers it gives to their response's setter, and
 * refuse or proceed; the client address, forwarded headers and path spellings are resolved here
 * once for all of them.
 */
package dev.sluice.http;
