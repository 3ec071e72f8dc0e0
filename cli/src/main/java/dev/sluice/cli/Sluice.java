package dev.sluice.cli;

import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code sluice} command: {@code thresholds} picks a limit from access logs, {@code bench}
 * measures an HTTP API at a fixed rate, {@code knobs} reads and changes the fleet's knobs.
 *
 * <p>Bad arguments and failures print one line on standard error and exit non-zero (2 for a usage
 * error, 1 for a failure), never a stack trace.
 */
@Command(
    name = "sluice",
    mixinStandardHelpOptions = true,
    version = "sluice 0.1.0-SNAPSHOT",
    description =
        "Rate limits: choose them from your logs, measure your API over HTTP, and turn the"
            + " fleet's knobs.",
    subcommands = {
      ThresholdsCommand.class,
      BenchCommand.class,
      PlotCommand.class,
      KnobsCommand.class,
      GovernorCommand.class,
      SheddingCommand.class
    })
public final class Sluice implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    Charset cs = Charset.defaultCharset();
    System.exit(
        run(
            new PrintWriter(new OutputStreamWriter(System.out, cs), true),
            new PrintWriter(new OutputStreamWriter(System.err, cs), true),
            args));
  }

  /** Runs the command with the given streams and returns its exit code. */
  static int run(PrintWriter out, PrintWriter err, String... args) {
    CommandLine cl = new CommandLine(new Sluice());
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    cl.setOut(out);
    cl.setErr(err);
    cl.setParameterExceptionHandler(
        (ex, a) -> {
          CommandLine c = ex.getCommandLine();
          c.getErr()
              .println(
                  "sluice: "
                      + ex.getMessage()
                      + " (see '"
                      + c.getCommandSpec().qualifiedName()
                      + " --help')");
          return 2;
        });
    cl.setExecutionExceptionHandler(
        (ex, c, parsed) -> {
          String msg = ex.getMessage() == null ? ex.getClass().getSimpleName() : ex.getMessage();
          c.getErr().println("sluice: " + msg);
          return ex instanceof UsageError ? 2 : 1;
        });
    int code = cl.execute(args);
    out.flush();
    err.flush();
    return code;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(),
        "a command is needed: thresholds, bench, plot, knobs, governor or shedding");
  }

  /** An argument that parsed but makes no sense; reported as a usage error (exit 2). */
  static final class UsageError extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UsageError(String message) {
      super(message);
    }
  }
}
