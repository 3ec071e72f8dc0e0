package dev.sluice.yaml;

/**
 * A rules file that cannot be used: names the file, the line and the field at fault, as in {@code
 * rules.yaml:12: rules[0].tiers[1].limit: must be > 0}.
 */
public final class RulesException extends IllegalArgumentException {

  private final String file;
  private final int line;
  private final String field;

  RulesException(String file, int line, String field, String problem) {
    super(file + ":" + line + ": " + field + ": " + problem);
    this.file = file;
    this.line = line;
    this.field = field;
  }

  public String file() {
    return file;
  }

  /** 1-based. */
  public int line() {
    return line;
  }

  /** {@return the path of the field, e.g. {@code rules[0].tiers[1].limit}} */
  public String field() {
    return field;
  }
}
