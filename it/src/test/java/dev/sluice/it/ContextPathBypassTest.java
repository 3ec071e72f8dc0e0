package dev.sluice.it;

import static org.junit.jupiter.api.Assertions.assertTrue;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import org.apache.catalina.Context;
import org.apache.catalina.startup.Tomcat;
import org.apache.tomcat.util.descriptor.web.FilterDef;
import org.apache.tomcat.util.descriptor.web.FilterMap;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The servlet filter under a context path, configured by init parameters as in a web.xml, on Tomcat
 * and on Jetty: a client that spells the context path otherwise ({@code //app}, {@code /%61pp},
 * {@code /a%70p}, {@code /./app}, {@code /x/../app}) reaches the same servlet, so it meets the same
 * limit. These spellings were each served 20 times of 20 with no rate-limit headers while the
 * filter matched the rules against the whole request URI.
 */
class ContextPathBypassTest {

  private static final List<String> SPELLINGS =
      List.of("/app", "//app", "/%61pp", "/a%70p", "/./app", "/x/../app", "/%2e/app", "/app;x=1");

  private static Tomcat tomcat;
  private static Server jetty;
  private static int tomcatPort;
  private static int jettyPort;

  /** The API: a plain servlet at /api/*, answering what it received. */
  public static final class Api extends HttpServlet {
    @Override
    protected void service(HttpServletRequest req, HttpServletResponse res) throws IOException {
      res.getWriter().write("pathInfo=" + req.getPathInfo());
    }
  }

  @BeforeAll
  static void start() throws Exception {
    Path rules = Files.createTempFile("sluice-context", ".yaml");
    Files.writeString(
        rules,
        """
        rules:
          - id: lead
            match: { methods: [POST], path: "/api/v1/lead/{id}" }
            key: [path:id]
            algorithm: token-bucket
            tiers: [ { limit: 5, period: 1h } ]
        """);

    tomcat = new Tomcat();
    tomcat.setBaseDir(Files.createTempDirectory("tomcat").toString());
    tomcat.setPort(0);
    tomcat.getConnector();
    Context app = tomcat.addContext("/app", null);
    Tomcat.addServlet(app, "api", new Api());
    app.addServletMappingDecoded("/api/*", "api");
    FilterDef def = new FilterDef();
    def.setFilterName("sluice");
    def.setFilterClass("dev.sluice.servlet.SluiceFilter");
    def.addInitParameter("rules", rules.toString());
    app.addFilterDef(def);
    FilterMap map = new FilterMap();
    map.setFilterName("sluice");
    map.addURLPattern("/*");
    app.addFilterMap(map);
    tomcat.start();
    tomcatPort = tomcat.getConnector().getLocalPort();

    jetty = new Server();
    ServerConnector connector = new ServerConnector(jetty);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    jetty.addConnector(connector);
    ServletContextHandler context = new ServletContextHandler("/app");
    context.addServlet(new ServletHolder(new Api()), "/api/*");
    FilterHolder filter = new FilterHolder(dev.sluice.servlet.SluiceFilter.class);
    filter.setInitParameter("rules", rules.toString());
    context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST));
    jetty.setHandler(context);
    jetty.start();
    jettyPort = connector.getLocalPort();
  }

  @AfterAll
  static void stop() throws Exception {
    if (tomcat != null) {
      tomcat.stop();
      tomcat.destroy();
    }
    if (jetty != null) {
      jetty.stop();
    }
  }

  @Test
  void tomcatLimitsEverySpellingOfTheContextPath() throws IOException {
    assertLimited("tomcat", tomcatPort);
  }

  @Test
  void jettyLimitsEverySpellingOfTheContextPath() throws IOException {
    assertLimited("jetty", jettyPort);
  }

  /** 20 requests per spelling, each spelling its own lead: at most 5 served, each with headers. */
  private static void assertLimited(String container, int port) throws IOException {
    List<String> failures = new ArrayList<>();
    int servedSomewhere = 0;
    for (int i = 0; i < SPELLINGS.size(); i++) {
      String target = SPELLINGS.get(i) + "/api/v1/lead/" + container + i;
      int served = 0;
      for (int n = 0; n < 20; n++) {
        String head = send(port, target);
        if (head.startsWith("HTTP/1.1 200")) {
          served++;
          if (!head.toLowerCase(Locale.ROOT).contains("x-ratelimit-limit: 5")) {
            failures.add(target + " served without rate-limit headers");
          }
        }
      }
      servedSomewhere += served;
      if (served > 5) {
        failures.add(target + " served " + served + " of 20 at a limit of 5");
      }
    }
    assertTrue(servedSomewhere > 0, container + " served none of the spellings");
    assertTrue(failures.isEmpty(), container + ":\n" + String.join("\n", failures));
  }

  /** The status line and headers of the answer to a POST of {@code target}, sent as spelled. */
  private static String send(int port, String target) throws IOException {
    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
      s.setSoTimeout(10_000);
      OutputStream out = s.getOutputStream();
      out.write(
          ("POST "
                  + target
                  + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = s.getInputStream();
      String all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      int end = all.indexOf("\r\n\r\n");
      return end < 0 ? all : all.substring(0, end);
    }
  }
}
