package dev.sluice.http;

import dev.sluice.Outcome;
import dev.sluice.engine.Engine;
import dev.sluice.engine.Policy;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Finds the rules that apply to a request and hands them to the {@link Engine}: method and path
 * against the rules the {@link RuleIndex} finds for them (both readings of a path with dot
 * segments), the identity each rule's key gives, the quota tier, and the load-shedding class.
 * Stateless beyond its settings.
 */
final class RequestMatcher {

  /** Each request thread's path segments and candidates, reused: matching allocates nothing. */
  private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

  private static final class Scratch {
    final PathPattern.Segments path = new PathPattern.Segments();
    final RuleIndex.Candidates found = new RuleIndex.Candidates();
  }

  private final Engine engine;
  private final QuotaResolver quotas;
  private final Map<String, KeyResolver> apps;

  RequestMatcher(Engine engine, QuotaResolver quotas, Map<String, KeyResolver> apps) {
    this.engine = engine;
    this.quotas = quotas;
    this.apps = apps;
  }

  /**
   * Decides by the candidates; matches method and path, looking the candidates up in the index of
   * {@code c} (whose active rules they are), unless {@code bound} carries the path parameters of an
   * adapter's bound rules.
   */
  boolean decide(
      RequestInfo request,
      CompiledRules c,
      ActiveRule[] candidates,
      Map<String, String> bound,
      Outcome out) {
    int cls =
        bound == null
            ? match(request, c, true, null, null, out)
            : match(request, c, false, candidates, bound, out);
    if (cls == FAILED) {
      return out.allowed();
    }
    try {
      return cls == UNSHED ? engine.decide(out, 1) : c.shed().decide(engine, out, cls);
    } catch (RuntimeException e) {
      engine.failed(out, e);
      return out.allowed();
    }
  }

  /**
   * Decides by the rules of {@code c} that match {@code request} and by an adapter's bound rules
   * {@code boundRules} (with their path parameters {@code bound}) together: one decision, so a
   * request any of them refuses takes nothing from the others.
   */
  boolean decideWithRules(
      RequestInfo request,
      CompiledRules c,
      ActiveRule[] boundRules,
      Map<String, String> bound,
      Outcome out) {
    int cls = match(request, c, true, boundRules, bound, out);
    if (cls == FAILED) {
      return out.allowed();
    }
    try {
      return cls == UNSHED ? engine.decide(out, 1) : c.shed().decide(engine, out, cls);
    } catch (RuntimeException e) {
      engine.failed(out, e);
      return out.allowed();
    }
  }

  /**
   * {@link #decide} without waiting on the store: completes, never exceptionally, once {@code out}
   * holds the answer.
   */
  CompletableFuture<Boolean> decideAsync(
      RequestInfo request,
      CompiledRules c,
      ActiveRule[] candidates,
      Map<String, String> bound,
      Outcome out) {
    int cls =
        bound == null
            ? match(request, c, true, null, null, out)
            : match(request, c, false, candidates, bound, out);
    if (cls == FAILED) {
      return CompletableFuture.completedFuture(out.allowed());
    }
    try {
      return cls == UNSHED ? engine.decideAsync(out, 1) : c.shed().decideAsync(engine, out, cls);
    } catch (RuntimeException e) {
      engine.failed(out, e);
      return CompletableFuture.completedFuture(out.allowed());
    }
  }

  /** What {@link #match} returns when no load shedding applies. */
  private static final int UNSHED = Integer.MIN_VALUE;

  /** What {@link #match} returns when it failed, and decided {@code out} by the failure. */
  private static final int FAILED = Integer.MIN_VALUE + 1;

  /**
   * Adds the policies of every rule that applies to {@code out}: when {@code byPath}, the rules of
   * {@code c} whose method and path match (looked up in its index), and the adapter's bound rules
   * {@code boundRules} (none when null) with their path parameters {@code bound}. Returns the
   * request's load-shedding class (only when {@code byPath}), {@link #UNSHED}, or {@link #FAILED}.
   */
  private int match(
      RequestInfo request,
      CompiledRules c,
      boolean byPath,
      ActiveRule[] boundRules,
      Map<String, String> bound,
      Outcome out) {
    ActiveRule current = null;
    RuntimeException failure = null;
    ActiveRule failedRule = null;
    boolean added = false;
    try {
      PathPattern.Segments path = null;
      PathPattern.Segments resolved = null;
      String method = null;
      RuleIndex.Candidates found = null;
      ActiveRule[] active = c.active();
      if (byPath) {
        Scratch scratch = SCRATCH.get();
        path = scratch.path;
        path.of(request.path());
        resolved = request.dotSegmentsAreData() ? null : path.resolved();
        method = upper(request.method());
        found = scratch.found;
        c.index().candidates(method, path, resolved, found);
      }
      int byPathCount = found == null ? 0 : found.size();
      int n = byPathCount + (boundRules == null ? 0 : boundRules.length);
      for (int i = 0; i < n; i++) {
        boolean isBound = i >= byPathCount;
        ActiveRule a = isBound ? boundRules[i - byPathCount] : active[found.get(i)];
        current = a;
        Map<String, String> captures = bound;
        Map<String, String> other = null;
        if (!isBound) {
          captures = a.pattern.match(path);
          other = resolved == null ? null : a.pattern.match(resolved);
          if (captures == null) {
            captures = other;
            other = null;
            if (captures == null) {
              continue;
            }
          }
        }
        Policy policy = null;
        String identity = null;
        try {
          identity = a.identity(request, captures, c.clients(), apps);
          if (identity != null) {
            policy = a.policyFor(quotas.quota(request, a.rule));
            engine.add(out, policy, identity);
            added = true;
          }
          if (other != null && !other.equals(captures)) {
            // Both readings match, with other captures: counted under both, the stricter reading.
            String second = a.identity(request, other, c.clients(), apps);
            if (second != null && !second.equals(identity)) {
              engine.add(
                  out,
                  policy != null ? policy : a.policyFor(quotas.quota(request, a.rule)),
                  second);
              added = true;
            }
          }
        } catch (RuntimeException e) {
          // Its key or quota resolver threw: this rule is decided by its failure setting, and the
          // other rules still count (a client cannot leave the others out by making one throw).
          // Of several, a rule that refuses on failure decides; the application's exceptions are
          // left as they are (one may be a shared instance).
          if (failure == null || (failsClosed(a) && !failsClosed(failedRule))) {
            failure = e;
            failedRule = a;
          }
        }
      }
      current = null;
      SheddingPlan s = byPath ? c.shed() : null;
      if (failure != null) {
        if (failsClosed(failedRule) || (!added && s == null)) {
          engine.add(out, failedRule.policy, "");
          engine.failed(out, failure);
          return FAILED;
        }
        // The other rules decide, or the load shedders alone: a client cannot leave them out by
        // making the only rule that matches throw.
        engine.reportFailure(failure);
      }
      if (s == null) {
        return UNSHED;
      }
      int cls = s.classify(method, path, request);
      if (resolved != null) {
        cls = s.shedFirst(cls, s.classify(method, resolved, request));
      }
      return cls;
    } catch (RuntimeException e) {
      if (current != null) {
        // The rule being read when it failed applies, to decide by its failure setting.
        engine.add(out, current.policy, "");
      }
      engine.failed(out, e);
      return FAILED;
    }
  }

  /** Whether a failure to resolve {@code a}'s key or quota refuses the request. */
  private static boolean failsClosed(ActiveRule a) {
    return a.rule.failClosed() && !a.rule.shadow();
  }

  private static String upper(String method) {
    return method == null ? "" : method.toUpperCase(Locale.ROOT);
  }
}
