package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.lang.module.ModuleDescriptor;
import java.net.URL;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * An application on the module path sees the API packages and nothing else: the counting algorithms
 * are the engine's alone.
 */
class ModuleDescriptorTest {

  @Test
  void theModuleExportsTheApiPackagesAndNotTheAlgorithms() throws Exception {
    // core's own descriptor, wherever its classes are (a directory here, a jar elsewhere)
    URL classes = Engine.class.getProtectionDomain().getCodeSource().getLocation();
    URL descriptor =
        classes.getPath().endsWith(".jar")
            ? new URL("jar:" + classes + "!/module-info.class")
            : classes.toURI().resolve("module-info.class").toURL();
    ModuleDescriptor d;
    try (InputStream in = descriptor.openStream()) {
      assertNotNull(in, "core is compiled with a module descriptor");
      d = ModuleDescriptor.read(in);
    }
    assertEquals("dev.sluice.core", d.name());
    Set<String> exported =
        d.exports().stream().map(ModuleDescriptor.Exports::source).collect(Collectors.toSet());
    assertEquals(
        Set.of(
            "dev.sluice",
            "dev.sluice.control",
            "dev.sluice.http",
            "dev.sluice.shedding",
            "dev.sluice.spi"),
        exported);
    assertTrue(d.exports().stream().noneMatch(ModuleDescriptor.Exports::isQualified));
    assertTrue(d.uses().contains("dev.sluice.spi.CounterStoreProvider"));
  }
}
