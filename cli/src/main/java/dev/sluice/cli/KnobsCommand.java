package dev.sluice.cli;

import dev.sluice.control.Knobs;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.SharedValues;
import dev.sluice.store.memcached.MemcachedCounterStore;
import dev.sluice.store.redis.RedisCounterStore;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.UnaryOperator;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code sluice knobs}: reads and changes the fleet's knobs in its store (memcached or Redis).
 * Every instance reading knobs sees a change within its refresh (1 s by default).
 */
@Command(
    name = "knobs",
    mixinStandardHelpOptions = true,
    description = "Read and change the knobs every instance of a fleet applies.",
    subcommands = {KnobsCommand.Set.class, KnobsCommand.Get.class, KnobsCommand.Clear.class})
final class KnobsCommand implements Runnable {

  @Spec picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(
        spec.commandLine(), "a knobs command is needed: set, get or clear");
  }

  /** Where the knobs live: the fleet's memcached or Redis, and the store's key prefix. */
  static final class Store {
    @Option(
        names = "--memcached",
        paramLabel = "HOST:PORT",
        description = "The fleet's memcached server(s), host:port[,host:port…].")
    String servers;

    @Option(
        names = "--redis",
        paramLabel = "URI",
        description =
            "The fleet's Redis: host:port, redis://…, rediss://… or redis-sentinel://…#master.")
    String redis;

    @Option(
        names = "--redis-cluster",
        paramLabel = "HOST:PORT",
        description = "The fleet's Redis Cluster, some of its nodes: host:port[,host:port…].")
    String redisCluster;

    @Option(
        names = "--prefix",
        defaultValue = "sluice",
        description = "The store's key prefix, as the instances are configured (default: sluice).")
    String prefix;

    @Option(
        names = "--timeout",
        defaultValue = "2s",
        paramLabel = "PERIOD",
        converter = ThresholdsCommand.PeriodConverter.class,
        description = "How long to wait for the store (default: 2s).")
    Duration timeout;

    /** Runs {@code f} with the store's shared values, and turns a silent store into a line. */
    <T> T with(java.util.function.Function<SharedValues, T> f) {
      Duration t = timeout;
      int given =
          (servers != null ? 1 : 0) + (redis != null ? 1 : 0) + (redisCluster != null ? 1 : 0);
      if (given != 1) {
        throw new Sluice.UsageError("one of --memcached, --redis and --redis-cluster is required");
      }
      String option =
          servers != null ? "--memcached" : redis != null ? "--redis" : "--redis-cluster";
      String where =
          servers != null
              ? "memcached at " + servers
              : "redis at " + (redis != null ? redis : redisCluster);
      CounterStore store;
      try {
        if (servers != null) {
          store =
              MemcachedCounterStore.builder()
                  .servers(servers)
                  .prefix(prefix)
                  .operationTimeout(t)
                  .connectTimeout(t)
                  .build();
        } else {
          RedisCounterStore.Builder b = RedisCounterStore.builder();
          if (redis != null) {
            b.uri(redis);
          } else {
            b.cluster(redisCluster);
          }
          store = b.prefix(prefix).operationTimeout(t).connectTimeout(t).storeClock(false).build();
        }
      } catch (IllegalArgumentException e) {
        throw new Sluice.UsageError(option + ": " + e.getMessage());
      }
      try {
        return f.apply(store.sharedValues().orElseThrow());
      } catch (IllegalArgumentException | Sluice.UsageError e) {
        throw e;
      } catch (RuntimeException e) {
        throw new IllegalStateException(
            where + " did not answer within " + dev.sluice.Periods.format(t), e);
      } finally {
        store.close();
      }
    }
  }

  @Command(
      name = "set",
      mixinStandardHelpOptions = true,
      description = {
        "Set knobs: global enabled=BOOL; rule:ID enabled=BOOL shadow=BOOL limit=N;",
        "throttle:NAME rate=PERMITS_PER_SECOND burst=MULTIPLIER."
      })
  static final class Set implements Runnable {
    @picocli.CommandLine.Mixin Store store;

    @Parameters(
        index = "0",
        paramLabel = "TARGET",
        description = "global, rule:ID or throttle:NAME")
    String target;

    @Parameters(index = "1..*", arity = "1..*", paramLabel = "FIELD=VALUE")
    List<String> fields;

    @Option(
        names = "--rules",
        paramLabel = "FILE",
        description =
            "The fleet's rules file: a rule's knob is refused unless the rule exists and can take"
                + " it (a token bucket holds at most 1000000 tokens).")
    java.nio.file.Path rules;

    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      UnaryOperator<Knobs> change =
          k -> {
            Knobs out = k;
            for (String f : fields) {
              int eq = f.indexOf('=');
              if (eq <= 0) {
                throw new Sluice.UsageError("'" + f + "' is not FIELD=VALUE");
              }
              out = out.with(target, f.substring(0, eq), f.substring(eq + 1));
            }
            return out;
          };
      usage(() -> Objects.requireNonNull(change.apply(Knobs.NONE)));
      if (rules != null) {
        checkAgainstRules(change.apply(Knobs.NONE), rules, target);
      }
      Knobs now = store.with(v -> Knobs.change(v, change));
      print(spec.commandLine().getOut(), now, target);
    }
  }

  /**
   * Refuses a rule knob that the rules file's rule cannot take, with the line an instance would
   * log: the rules are compiled with the knob over them, on a store that is never called.
   */
  private static void checkAgainstRules(Knobs knobs, java.nio.file.Path file, String target) {
    dev.sluice.http.RuleSet set;
    try {
      set = dev.sluice.yaml.YamlRules.load(file);
    } catch (RuntimeException e) {
      throw new Sluice.UsageError("--rules: " + e.getMessage());
    }
    if (target.startsWith("rule:") && set.rule(target.substring(5)).isEmpty()) {
      throw new Sluice.UsageError(target + ": no rule with that id in " + file);
    }
    dev.sluice.http.RequestLimiter limiter =
        dev.sluice.http.RequestLimiter.builder(NOWHERE).rules(set).build();
    limiter.applyKnobs(knobs);
    if (!limiter.knobProblems().isEmpty()) {
      throw new Sluice.UsageError(limiter.knobProblems().get(0));
    }
  }

  /** A store nothing is counted in: compiling rules never calls it. */
  private static final dev.sluice.spi.CounterStore NOWHERE =
      new dev.sluice.spi.CounterStore() {
        @Override
        public dev.sluice.spi.Counts increment(List<dev.sluice.spi.CounterUpdate> updates) {
          throw new UnsupportedOperationException("compiling only");
        }

        @Override
        public void decrement(List<dev.sluice.spi.CounterUpdate> updates) {
          throw new UnsupportedOperationException("compiling only");
        }
      };

  @Command(name = "get", mixinStandardHelpOptions = true, description = "Show the knobs set.")
  static final class Get implements Runnable {
    @picocli.CommandLine.Mixin Store store;

    @Parameters(
        index = "0",
        arity = "0..1",
        paramLabel = "TARGET",
        description = "Only this target's knobs (default: all).")
    String target;

    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      if (target != null) {
        usage(() -> Knobs.checkTarget(target));
      }
      Knobs now =
          store.with(
              v ->
                  v.get(Knobs.VALUE_NAME)
                      .map(
                          s ->
                              Knobs.parse(
                                  s.value(),
                                  Knobs.NONE,
                                  p -> spec.commandLine().getErr().println("sluice: skipped " + p)))
                      .orElse(Knobs.NONE));
      PrintWriter out = spec.commandLine().getOut();
      if (target == null) {
        out.print(now.targets().isEmpty() ? "(no knobs set)\n" : now.format());
      } else {
        print(out, now, target);
      }
      out.flush();
    }
  }

  @Command(
      name = "clear",
      mixinStandardHelpOptions = true,
      description = "Clear a target's knobs (or only the fields named): the rules' values return.")
  static final class Clear implements Runnable {
    @picocli.CommandLine.Mixin Store store;

    @Parameters(index = "0", paramLabel = "TARGET")
    String target;

    @Parameters(index = "1..*", arity = "0..*", paramLabel = "FIELD")
    List<String> fields;

    @Spec picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
      usage(() -> Knobs.checkTarget(target));
      Knobs now =
          store.with(
              v ->
                  Knobs.change(
                      v,
                      k -> {
                        if (fields == null || fields.isEmpty()) {
                          return k.without(target);
                        }
                        Knobs out = k.without(target);
                        for (Map.Entry<String, String> e :
                            k.targets().getOrDefault(target, Map.of()).entrySet()) {
                          if (!fields.contains(e.getKey())) {
                            out = out.with(target, e.getKey(), e.getValue());
                          }
                        }
                        return out;
                      }));
      print(spec.commandLine().getOut(), now, target);
    }
  }

  /** Runs a check whose refusal is the user's input: exit 2, one line. */
  private static void usage(Runnable check) {
    try {
      check.run();
    } catch (IllegalArgumentException e) {
      throw new Sluice.UsageError(e.getMessage());
    }
  }

  private static void print(PrintWriter out, Knobs k, String target) {
    Map<String, String> f = k.targets().get(target);
    if (f == null) {
      out.println(target + ": no knobs set");
    } else {
      StringBuilder sb = new StringBuilder(target);
      f.forEach((n, v) -> sb.append(' ').append(n).append('=').append(v));
      out.println(sb);
    }
    out.flush();
  }
}
