package dev.sluice;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.io.StringWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/**
 * Compiles the Java snippets of one README section against the calling module's test class path, so
 * a snippet the README calls complete stays complete. For tests in the modules that hold each
 * framework.
 */
public final class ReadmeSnippets {
  private static final Pattern CLASS = Pattern.compile("(?m)^public (?:final )?class (\\w+)");

  private ReadmeSnippets() {}

  /** The {@code ```java} blocks between the heading {@code heading} and the next heading. */
  public static List<String> javaUnder(String heading) throws IOException {
    Path readme = Path.of("..", "README.md");
    List<String> lines = Files.readAllLines(readme, StandardCharsets.UTF_8);
    List<String> blocks = new ArrayList<>();
    boolean inSection = false;
    boolean fenced = false;
    StringBuilder block = null;
    for (String line : lines) {
      if (fenced) {
        if (line.equals("```")) {
          fenced = false;
          if (block != null) {
            blocks.add(block.toString());
            block = null;
          }
        } else if (block != null) {
          block.append(line).append('\n');
        }
      } else if (line.startsWith("```")) {
        fenced = true;
        block = inSection && line.equals("```java") ? new StringBuilder() : null;
      } else if (line.startsWith("#")) {
        inSection = line.replaceFirst("^#+ ", "").equals(heading);
      }
    }
    assertFalse(blocks.isEmpty(), "README.md has no java block under '" + heading + "'");
    return blocks;
  }

  /**
   * Compiles each block as a source file named after its public class; fails with javac's words.
   */
  public static void compile(List<String> blocks) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    List<JavaFileObject> sources = new ArrayList<>();
    for (String b : blocks) {
      Matcher m = CLASS.matcher(b);
      String name = m.find() ? m.group(1) : "Snippet";
      sources.add(
          new SimpleJavaFileObject(
              URI.create("string:///" + name + ".java"), JavaFileObject.Kind.SOURCE) {
            @Override
            public CharSequence getCharContent(boolean ignoreEncodingErrors) {
              return b;
            }
          });
    }
    Path out = Files.createTempDirectory("readme-snippets");
    StringWriter errors = new StringWriter();
    boolean ok =
        javac
            .getTask(
                errors,
                null,
                null,
                List.of(
                    "-proc:none",
                    "-classpath",
                    System.getProperty("java.class.path"),
                    "-d",
                    out.toString()),
                null,
                sources)
            .call();
    assertEquals("", ok ? "" : errors.toString(), "README snippets compile");
  }
}
