/**
 * The gRPC adapter: {@link dev.sluice.grpc.SluiceServerInterceptor}, which decides without blocking
 * the transport's threads. Never imports another adapter.
 */
package dev.sluice.grpc;
