/**
 * Real store servers for Sluice's own tests, one process per test class: {@link
 * dev.sluice.testkit.Memcached @Memcached} with {@link dev.sluice.testkit.MemcachedServer}, and
 * {@link dev.sluice.testkit.Redis @Redis} with {@link dev.sluice.testkit.RedisServer} (and {@link
 * dev.sluice.testkit.RedisCluster} for a cluster a test starts itself), and a {@link
 * dev.sluice.testkit.TcpProxy} to put in front of either to slow or cut it. A store adds its own
 * annotation, server class and a subclass of the package's {@code ServerExtension}. Used with
 * {@code <scope>test</scope>}; not published.
 */
package dev.sluice.testkit;
