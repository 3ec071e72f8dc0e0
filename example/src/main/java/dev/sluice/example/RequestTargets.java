package dev.sluice.example;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.glassfish.grizzly.http.server.ErrorPageGenerator;
import org.glassfish.grizzly.http.server.HttpHandler;
import org.glassfish.grizzly.http.server.Request;
import org.glassfish.grizzly.http.server.Response;

/**
 * In front of Jersey on Grizzly: a request target that is not a valid URI (a {@code %} not followed
 * by two hex digits, a raw {@code \}, a space or a non-ASCII character) gets a 400 with a
 * problem+json body. Without it Jersey's container fails to parse the target and Grizzly answers
 * 500 with the exception's stack trace in the page.
 */
final class RequestTargets extends HttpHandler {

  /** Grizzly's error pages without the exception: status and reason only. */
  static final ErrorPageGenerator NO_STACK_TRACES =
      (request, status, reason, description, exception) ->
          "<html><body><h1>" + status + " " + escape(reason) + "</h1></body></html>";

  private final HttpHandler next;

  RequestTargets(HttpHandler next) {
    this.next = next;
  }

  @Override
  public void service(Request request, Response response) throws Exception {
    String query = request.getQueryString();
    if (valid(request.getRequestURI()) && (query == null || valid(query))) {
      next.service(request, response);
      return;
    }
    byte[] body =
        ("{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,"
                + "\"detail\":\"the request target is not a valid URI\"}")
            .getBytes(StandardCharsets.UTF_8);
    response.setStatus(400);
    response.setContentType("application/problem+json");
    response.setContentLength(body.length);
    try {
      response.getOutputStream().write(body);
    } catch (IOException e) {
      // The client left; nothing to answer.
    }
  }

  /** Whether {@code s} holds only characters a URI's path or query may, and whole escapes. */
  static boolean valid(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '%') {
        if (i + 2 >= s.length()
            || Character.digit(s.charAt(i + 1), 16) < 0
            || Character.digit(s.charAt(i + 2), 16) < 0) {
          return false;
        }
        i += 2;
      } else if (!(c < 128 && ALLOWED[c])) {
        return false;
      }
    }
    return true;
  }

  /** RFC 3986: unreserved, sub-delims, ':', '@', '/' and '?'. */
  private static final boolean[] ALLOWED = new boolean[128];

  static {
    String chars =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?";
    for (int i = 0; i < chars.length(); i++) {
      ALLOWED[chars.charAt(i)] = true;
    }
  }

  private static String escape(String s) {
    return s == null ? "" : s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }

  @Override
  public void start() {
    next.start();
  }

  @Override
  public void destroy() {
    next.destroy();
  }
}
