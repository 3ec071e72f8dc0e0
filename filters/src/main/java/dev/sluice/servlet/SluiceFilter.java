package dev.sluice.servlet;

import dev.sluice.Decision;
import dev.sluice.RateLimitHeaders;
import dev.sluice.RequestInfo;
import dev.sluice.RequestLimiter;
import dev.sluice.RuleSet;
import dev.sluice.rules.RulesFile;
import dev.sluice.rules.YamlRules;
import dev.sluice.spi.CounterStore;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.Principal;
import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Rate limiting for any servlet application, with the same rules and responses as the JAX-RS
 * feature. Configure it in code with {@link #SluiceFilter(RequestLimiter)}, or in web.xml with the
 * init parameters:
 *
 * <ul>
 *   <li>{@code rules}: a rules file path, or {@code classpath:NAME} for a resource (a file is watched);
 *   <li>{@code store}: the class name of a {@link CounterStore} with a public static {@code create()}
 *       method or a public no-argument constructor, e.g. {@code
 *       dev.sluice.store.inmemory.InMemoryCounterStore}.
 * </ul>
 *
 * Thread-safe.
 */
public final class SluiceFilter implements Filter {

  private volatile RequestLimiter limiter;
  private RulesFile watcher;

  /** For web.xml: configured by init parameters in {@link #init}. */
  public SluiceFilter() {}

  public SluiceFilter(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  public void init(FilterConfig config) throws ServletException {
    if (limiter != null) {
      return;
    }
    String rules = config.getInitParameter("rules");
    String store = config.getInitParameter("store");
    if (rules == null || store == null) {
      throw new ServletException("SluiceFilter needs the init parameters 'rules' and 'store', or a RequestLimiter");
    }
    RuleSet ruleSet = rules.startsWith("classpath:") ? YamlRules.loadResource(rules.substring(10))
        : YamlRules.load(Path.of(rules));
    limiter = RequestLimiter.builder(createStore(store)).rules(ruleSet).build();
    if (!rules.startsWith("classpath:")) {
      watcher = RulesFile.watch(Path.of(rules), limiter, Duration.ofSeconds(1));
    }
  }

  private static CounterStore createStore(String className) throws ServletException {
    try {
      Class<?> type = Class.forName(className, true, Thread.currentThread().getContextClassLoader());
      try {
        return (CounterStore) type.getMethod("create").invoke(null);
      } catch (NoSuchMethodException e) {
        return (CounterStore) type.getConstructor().newInstance();
      }
    } catch (ReflectiveOperationException | ClassCastException e) {
      throw new ServletException("cannot create the counter store '" + className + "': " + e, e);
    }
  }

  /** The limiter: its kill switch, rule switches and {@code update}. */
  public RequestLimiter limiter() {
    return limiter;
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request) || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    RequestLimiter l = limiter;
    Decision d = l.decide(new ServletRequestInfo(request));
    if (d == null) {
      chain.doFilter(req, res);
      return;
    }
    RuleSet rules = l.rules();
    for (Map.Entry<String, String> h : RateLimitHeaders.of(d, rules.headers(), rules.resetFormat(), l.clock().millis())) {
      response.setHeader(h.getKey(), h.getValue());
    }
    if (d.allowed()) {
      chain.doFilter(req, res);
      return;
    }
    byte[] body = RateLimitHeaders.problem(d).getBytes(StandardCharsets.UTF_8);
    response.setStatus(RateLimitHeaders.status(d));
    response.setContentType(RateLimitHeaders.PROBLEM_JSON);
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }

  @Override
  public void destroy() {
    if (watcher != null) {
      watcher.close();
    }
  }

  /** A servlet request as the rules see it. */
  private static final class ServletRequestInfo implements RequestInfo {
    private final HttpServletRequest request;

    ServletRequestInfo(HttpServletRequest request) {
      this.request = request;
    }

    @Override
    public String method() {
      return request.getMethod();
    }

    @Override
    public String path() {
      // Raw, below the context path; the rules normalize and decode it.
      String uri = request.getRequestURI();
      String context = request.getContextPath();
      return context != null && !context.isEmpty() && uri.startsWith(context) ? uri.substring(context.length()) : uri;
    }

    @Override
    public List<String> headers(String name) {
      var values = request.getHeaders(name);
      return values == null ? List.of() : Collections.list(values);
    }

    @Override
    public String remoteAddress() {
      return request.getRemoteAddr();
    }

    @Override
    public String principal() {
      Principal p = request.getUserPrincipal();
      return p == null ? null : p.getName();
    }

    @Override
    public Object attribute(String name) {
      return request.getAttribute(name);
    }
  }
}
