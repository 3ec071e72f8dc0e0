package dev.sluice.http;

/**
 * The one header a rule set's trusted proxies set to name the client. Only that header is read: a
 * proxy that appends to {@code X-Forwarded-For} passes a client's own {@code Forwarded} header
 * through untouched, so reading both would let a client choose its address.
 */
public enum ForwardedHeader {
  /** {@code X-Forwarded-For: client, proxy1, proxy2} (nginx, HAProxy, AWS ALB and most others). */
  X_FORWARDED_FOR,
  /** {@code Forwarded: for=client, for=proxy1} (RFC 7239). */
  FORWARDED
}
