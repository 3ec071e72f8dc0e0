package dev.sluice.testkit;

import java.util.ArrayList;
import java.util.List;
import org.testcontainers.containers.GenericContainer;

/** A memcached in a container (Testcontainers), for a host without the binary. */
final class MemcachedContainer implements MemcachedBackend {
  private final GenericContainer<?> container;

  @SuppressWarnings("resource")
  MemcachedContainer(int megabytes, List<String> extraArgs) {
    List<String> command = new ArrayList<>(List.of("memcached", "-m", String.valueOf(megabytes)));
    command.addAll(extraArgs);
    container =
        new GenericContainer<>("memcached:1.6-alpine")
            .withCommand(command.toArray(String[]::new))
            .withExposedPorts(11211);
    container.start();
  }

  @Override
  public int port() {
    return container.getMappedPort(11211);
  }

  @Override
  public void start() {
    container.getDockerClient().startContainerCmd(container.getContainerId()).exec();
  }

  @Override
  public void kill() {
    if (container.isRunning()) {
      container.getDockerClient().killContainerCmd(container.getContainerId()).exec();
    }
  }

  @Override
  public void signal(String signal) {
    var docker = container.getDockerClient();
    if (signal.equals("STOP")) {
      docker.pauseContainerCmd(container.getContainerId()).exec();
    } else {
      docker.unpauseContainerCmd(container.getContainerId()).exec();
    }
  }
}
