package dev.sluice.testkit;

/** Where a {@link MemcachedServer} runs: a local process or a container. */
interface MemcachedBackend {
  int port();

  void start();

  void kill();

  void signal(String signal);
}
