package dev.sluice.store.memcached;

import net.spy.memcached.compat.log.AbstractLogger;
import net.spy.memcached.compat.log.Level;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * spymemcached's logging, through SLF4J under spymemcached's own logger names. Its chatter (a stack
 * trace per reconnection attempt, connection queue notices) goes to DEBUG; its errors stay errors,
 * in one line (the trace at DEBUG). The store itself logs one WARN line per node lost or regained.
 * Installed when the first {@link MemcachedCounterStore} is built, unless the application chose a
 * spymemcached logger with the {@code net.spy.log.LoggerImpl} system property (spymemcached reads
 * it once, for its first logger, so it has to be a system property). Thread-safe.
 */
public final class SpyLogging extends AbstractLogger {

  private static final String PROPERTY = "net.spy.log.LoggerImpl";

  private final Logger log;

  /** Routes spymemcached's logging here unless the application chose its own. */
  static synchronized void install() {
    if (System.getProperty(PROPERTY) == null) {
      System.setProperty(PROPERTY, SpyLogging.class.getName());
    }
  }

  public SpyLogging(String name) {
    super(name);
    this.log = LoggerFactory.getLogger(name);
  }

  @Override
  public boolean isTraceEnabled() {
    return log.isTraceEnabled();
  }

  @Override
  public boolean isDebugEnabled() {
    return log.isDebugEnabled();
  }

  @Override
  public boolean isInfoEnabled() {
    return log.isDebugEnabled();
  }

  @Override
  public void log(Level level, Object message, Throwable e) {
    String text = String.valueOf(message);
    if (level == Level.ERROR || level == Level.FATAL) {
      log.error(e == null ? text : text + ": " + e);
      if (e != null) {
        log.debug(text, e);
      }
    } else if (log.isDebugEnabled()) {
      log.debug(text, e);
    }
  }
}
