package dev.sluice.grpc;

import dev.sluice.ReadmeSnippets;
import org.junit.jupiter.api.Test;

/** The README's gRPC snippet compiles as given. */
class ReadmeGrpcTest {

  @Test
  void grpc() throws Exception {
    ReadmeSnippets.compile(ReadmeSnippets.javaUnder("gRPC"));
  }
}
