package dev.sluice.testkit;

import java.util.List;

/** Starts the memcached that {@link Memcached @Memcached} asks for. */
final class MemcachedExtension extends ServerExtension<Memcached, MemcachedServer> {

  MemcachedExtension() {
    super(Memcached.class, MemcachedServer.class);
  }

  @Override
  MemcachedServer start(Memcached options) {
    return MemcachedServer.start(options.megabytes(), List.of(options.args()));
  }
}
