package dev.sluice.testkit;

/** Starts the redis-server that {@link Redis @Redis} asks for. */
final class RedisExtension extends ServerExtension<Redis, RedisServer> {

  RedisExtension() {
    super(Redis.class, RedisServer.class);
  }

  @Override
  RedisServer start(Redis options) {
    return RedisServer.start(options.args());
  }
}
