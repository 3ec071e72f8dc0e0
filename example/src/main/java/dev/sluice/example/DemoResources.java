package dev.sluice.example;

import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.PUT;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;

/** The demo API: small JSON answers. */
@Path("/")
@Produces("application/json")
public class DemoResources {

  @GET
  @Path("api/v1/report")
  public String report() {
    return "{\"report\":\"weekly\",\"rows\":3}";
  }

  @POST
  @Path("api/v1/lead/{id}")
  public String lead(@PathParam("id") String id) {
    return "{\"lead\":\"" + json(id) + "\",\"saved\":true}";
  }

  @GET
  @Path("v1/organizations/{orgId}/product/{id}")
  public String product(@PathParam("orgId") String org, @PathParam("id") String id) {
    return "{\"organization\":\"" + json(org) + "\",\"product\":\"" + json(id) + "\"}";
  }

  @PUT
  @Path("v1/organizations/{orgId}/product/{id}")
  public String updateProduct(@PathParam("orgId") String org, @PathParam("id") String id) {
    return "{\"organization\":\""
        + json(org)
        + "\",\"product\":\""
        + json(id)
        + "\",\"updated\":true}";
  }

  @GET
  @Path("health")
  public String health() {
    return "{\"status\":\"up\"}";
  }

  private static String json(String s) {
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }
}
