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

  /** core's own descriptor, wherever its classes are (a directory here, a jar elsewhere). */
  private static ModuleDescriptor descriptor() throws Exception {
    URL classes = Tier.class.getProtectionDomain().getCodeSource().getLocation();
    URL descriptor =
        classes.getPath().endsWith(".jar")
            ? new URL("jar:" + classes + "!/module-info.class")
            : classes.toURI().resolve("module-info.class").toURL();
    try (InputStream in = descriptor.openStream()) {
      assertNotNull(in, "core is compiled with a module descriptor");
      return ModuleDescriptor.read(in);
    }
  }

  @Test
  void theModuleExportsTheApiPackagesAndNotTheAlgorithms() throws Exception {
    ModuleDescriptor d = descriptor();
    assertEquals("dev.sluice.core", d.name());
    Set<String> exported =
        d.exports().stream()
            .filter(e -> !e.isQualified())
            .map(ModuleDescriptor.Exports::source)
            .collect(Collectors.toSet());
    assertEquals(
        Set.of("dev.sluice", "dev.sluice.spi"),
        exported,
        "HTTP, control and shedding are modules above");
    assertEquals(
        Set.of("dev.sluice.engine"),
        d.exports().stream()
            .filter(ModuleDescriptor.Exports::isQualified)
            .map(ModuleDescriptor.Exports::source)
            .collect(Collectors.toSet()),
        "the engine, to the modules above that drive it");
    assertTrue(
        d.exports().stream()
            .filter(ModuleDescriptor.Exports::isQualified)
            .allMatch(
                e ->
                    e.targets()
                        .equals(
                            Set.of(
                                "dev.sluice.http", "dev.sluice.control", "dev.sluice.twolayer"))));
    assertTrue(d.uses().contains("dev.sluice.spi.CounterStoreProvider"));
    assertTrue(d.uses().contains("dev.sluice.engine.TwoLayer$Provider"));
  }

  /**
   * A published module may require only modules that name themselves: none whose name the module
   * system derives from a jar's file name. The adaptive shedder's Netflix limits are found through
   * a service instead.
   */
  @Test
  void theModuleRequiresOnlyModulesWithNamesOfTheirOwn() throws Exception {
    ModuleDescriptor d = descriptor();
    assertEquals(
        Set.of("java.base", "org.slf4j"),
        d.requires().stream().map(ModuleDescriptor.Requires::name).collect(Collectors.toSet()));
  }
}
