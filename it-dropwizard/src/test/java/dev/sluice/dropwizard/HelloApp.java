package dev.sluice.dropwizard;

import dev.sluice.http.RequestLimiter;
import dev.sluice.jaxrs.SluiceFeature;
import dev.sluice.servlet.SluiceFilter;
import dev.sluice.store.inmemory.InMemoryCounterStore;
import dev.sluice.yaml.YamlRules;
import io.dropwizard.core.Application;
import io.dropwizard.core.Configuration;
import io.dropwizard.core.setup.Environment;
import jakarta.servlet.DispatcherType;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.net.URISyntaxException;
import java.util.EnumSet;

/**
 * A Dropwizard service as the README shows it: the JAX-RS feature registered with Jersey, and the
 * servlet filter on the same application, each with its own rules file.
 */
public class HelloApp extends Application<Configuration> {

  @Override
  public void run(Configuration config, Environment env) {
    env.jersey().register(new Hello());
    env.jersey()
        .register(
            SluiceFeature.fromYaml(file("/feature-rules.yaml"), InMemoryCounterStore.create()));
    RequestLimiter filtered =
        RequestLimiter.builder(InMemoryCounterStore.create())
            .rules(YamlRules.load(file("/filter-rules.yaml")))
            .build();
    env.servlets()
        .addFilter("sluice", new SluiceFilter(filtered))
        .addMappingForUrlPatterns(EnumSet.of(DispatcherType.REQUEST), true, "/*");
  }

  static java.nio.file.Path file(String resource) {
    try {
      return java.nio.file.Path.of(HelloApp.class.getResource(resource).toURI());
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Two resources below the root path. */
  @Path("/")
  public static class Hello {
    @GET
    @Path("hello")
    public String hello() {
      return "hello";
    }

    @GET
    @Path("address")
    public String address() {
      return "address";
    }
  }
}
