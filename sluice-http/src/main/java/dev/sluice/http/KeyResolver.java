package dev.sluice.http;

import java.util.Optional;

/**
 * An identity the application resolves from its own data, for the key source {@code app:NAME}: the
 * customer that a validated API key belongs to, say, so that a customer-wide limit counts every key
 * of the customer and a client cannot leave its customer out. Registered with {@link
 * RequestLimiter.Builder#keyResolver}. Called on the request thread: keep it fast; an exception
 * leaves its rule out of the decision (or refuses the request, for a rule with {@code reject}), and
 * the other rules count as usual.
 */
@FunctionalInterface
public interface KeyResolver {

  /**
   * The identity for this request; empty when the request has none (the next key source is tried).
   */
  Optional<String> resolve(RequestInfo request);
}
