package dev.sluice.servlet;

import dev.sluice.Slots;
import dev.sluice.http.Admission;
import dev.sluice.http.RateLimitHeaders;
import dev.sluice.http.RequestInfo;
import dev.sluice.http.RequestLimiter;
import dev.sluice.http.RuleSet;
import dev.sluice.spi.CounterStore;
import dev.sluice.spi.CounterStoreProvider;
import dev.sluice.yaml.RulesFile;
import dev.sluice.yaml.YamlRules;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rate limiting for any servlet application, with the same rules and responses as the JAX-RS
 * feature. Configure it in code with {@link #SluiceFilter(RequestLimiter)}, or in web.xml with the
 * init parameters:
 *
 * <ul>
 *   <li>{@code rules}: a rules file path (watched for edits), or {@code classpath:NAME} for a
 *       resource;
 *   <li>{@code store}: {@code in-memory} (the default), {@code memcached} or {@code redis}, or the
 *       class name of the store; the store's module must be on the class path;
 *   <li>{@code store.NAME}: the store's settings. Memcached: {@code store.servers} ({@code
 *       host:port,host:port}, required), {@code store.prefix}, {@code store.operationTimeout} and
 *       {@code store.connectTimeout} (e.g. {@code 50ms}, {@code 2s}). Redis: {@code store.uri}
 *       ({@code host:port}, {@code redis://}, {@code rediss://} or {@code
 *       redis-sentinel://…#master}) or {@code store.cluster} ({@code host:port,host:port}), and
 *       {@code store.prefix}, {@code store.username}, {@code store.password}, {@code store.tls},
 *       {@code store.operationTimeout}, {@code store.connectTimeout}. In memory: {@code
 *       store.maximumCounters}.
 *   <li>{@code knobs}: how often to read the fleet's knobs from the store (e.g. {@code 1s}); unset,
 *       knobs are not read.
 * </ul>
 *
 * A store the filter created is closed by {@link #destroy()}. Rule paths match the request path
 * below the context path (the servlet mapping included), however the client spelled the context:
 * {@code //app/api}, {@code /%61pp/api} and {@code /x/../app/api} are {@code /api} under {@code
 * /app}, as the container routes them. Thread-safe.
 */
public final class SluiceFilter implements Filter {

  private static final Logger LOG = LoggerFactory.getLogger(SluiceFilter.class);

  private volatile RequestLimiter limiter;
  private RulesFile watcher;
  private CounterStore created;

  /** For web.xml: configured by init parameters in {@link #init}. */
  public SluiceFilter() {}

  public SluiceFilter(RequestLimiter limiter) {
    this.limiter = limiter;
  }

  @Override
  public void init(FilterConfig config) throws ServletException {
    if (limiter != null) {
      LOG.info("rate limit rules in force:\n{}", limiter);
      return;
    }
    String rules = config.getInitParameter("rules");
    if (rules == null) {
      throw new ServletException(
          "SluiceFilter needs the init parameter 'rules' (a file, or classpath:NAME), "
              + "or a RequestLimiter");
    }
    String store = config.getInitParameter("store");
    Map<String, String> settings = new HashMap<>();
    for (String name : Collections.list(config.getInitParameterNames())) {
      if (name.startsWith("store.")) {
        settings.put(name.substring(6), config.getInitParameter(name));
      }
    }
    RuleSet ruleSet;
    try {
      ruleSet =
          rules.startsWith("classpath:")
              ? YamlRules.loadResource(rules.substring(10))
              : YamlRules.load(Path.of(rules));
    } catch (RuntimeException e) {
      throw new ServletException("SluiceFilter: " + e.getMessage(), e);
    }
    try {
      created =
          CounterStoreProvider.create(
              store == null ? "in-memory" : store.trim(),
              settings,
              Thread.currentThread().getContextClassLoader());
    } catch (RuntimeException e) {
      throw new ServletException(
          "SluiceFilter: store " + (store == null ? "in-memory" : store) + ": " + e.getMessage(),
          e);
    }
    RequestLimiter.Builder b = RequestLimiter.builder(created).rules(ruleSet);
    String knobs = config.getInitParameter("knobs");
    if (knobs != null) {
      try {
        b.knobs(
            dev.sluice.Periods.parse(knobs.trim())
                .orElseThrow(
                    () -> new IllegalArgumentException("not a period (1s, 500ms): " + knobs)));
      } catch (RuntimeException e) {
        created.close();
        throw new ServletException("SluiceFilter: knobs: " + e.getMessage(), e);
      }
    }
    limiter = b.build();
    if (!rules.startsWith("classpath:")) {
      watcher = RulesFile.watch(Path.of(rules), limiter, Duration.ofSeconds(1));
    }
    LOG.info("rate limit rules in force (from {}, store {}):\n{}", rules, created, limiter);
  }

  /** {@return the limiter: its kill switch, rule switches and {@code update}} */
  public RequestLimiter limiter() {
    return limiter;
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request)
        || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    Admission a = Admission.decide(limiter, new Request(request));
    a.writeHeaders(response::setHeader);
    if (a.refused()) {
      byte[] body = a.problem().getBytes(StandardCharsets.UTF_8);
      response.setStatus(a.status());
      response.setContentType(RateLimitHeaders.PROBLEM_JSON);
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
      return;
    }
    Slots slots = a.slots();
    if (!slots.holds()) {
      chain.doFilter(req, res);
      return;
    }
    // A concurrency slot is given back before the response can be complete at the client (the
    // servlet closing the stream, a declared length written, an async complete()), at the latest
    // at the end of the chain, or, for an async request, when its async context completes, fails
    // or times out.
    boolean async = false;
    try {
      chain.doFilter(
          new ReleaseBeforeResponse.Request(request, slots),
          new ReleaseBeforeResponse.Response(response, slots));
      if (request.isAsyncStarted()) {
        request.getAsyncContext().addListener(new Release(slots));
        async = true;
      }
    } finally {
      if (!async) {
        slots.release();
      }
    }
  }

  @Override
  public void destroy() {
    RequestLimiter l = limiter;
    if (l != null) {
      l.close();
    }
    if (watcher != null) {
      watcher.close();
    }
    if (created != null) {
      created.close();
    }
  }

  /** Gives an async request's concurrency slots back however it ends. */
  private record Release(Slots slots) implements AsyncListener {
    @Override
    public void onComplete(AsyncEvent e) {
      slots.release();
    }

    @Override
    public void onTimeout(AsyncEvent e) {
      slots.release();
    }

    @Override
    public void onError(AsyncEvent e) {
      slots.release();
    }

    @Override
    public void onStartAsync(AsyncEvent e) {
      // A new async cycle of the same request: this listener must be registered again.
      e.getAsyncContext().addListener(this);
    }
  }

  /** A servlet request as the rules see it. */
  private static final class Request implements RequestInfo {
    private final HttpServletRequest request;

    Request(HttpServletRequest request) {
      this.request = request;
    }

    @Override
    public String method() {
      return request.getMethod();
    }

    @Override
    public String path() {
      // Raw, below the context path as the container matched it; the rules split and decode it,
      // reading dot segments both ways.
      return ContextPath.below(
          request.getRequestURI(),
          request.getContextPath(),
          request.getServletPath(),
          request.getPathInfo());
    }

    @Override
    public List<String> headers(String name) {
      var values = request.getHeaders(name);
      return values == null ? List.of() : Collections.list(values);
    }

    @Override
    public Optional<String> header(String name) {
      String first = request.getHeader(name); // the first value, without a list
      return first == null ? Optional.empty() : Optional.of(first.trim());
    }

    @Override
    public Optional<String> remoteAddress() {
      return Optional.ofNullable(request.getRemoteAddr());
    }

    @Override
    public Optional<String> principal() {
      Principal p = request.getUserPrincipal();
      return p == null ? Optional.empty() : Optional.ofNullable(p.getName());
    }

    @Override
    public Optional<Object> attribute(String name) {
      return Optional.ofNullable(request.getAttribute(name));
    }
  }
}
