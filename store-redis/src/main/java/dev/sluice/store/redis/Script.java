package dev.sluice.store.redis;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.RedisScriptingAsyncCommands;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A Lua script of this package, called by its SHA-1 ({@code EVALSHA}). A server that does not hold
 * it (restarted, failed over, or never sent it) answers {@code NOSCRIPT}, and the script is sent
 * whole once ({@code EVAL}, which also caches it there): there is no separate load step, and no
 * state to lose.
 */
final class Script {

  static final Script COUNT = new Script("count.lua");
  static final Script GIVE_BACK = new Script("give-back.lua");
  static final Script VALUE_GET = new Script("value-get.lua");
  static final Script VALUE_SET = new Script("value-set.lua");
  static final Script TIME = new Script("time.lua");
  static final java.util.List<Script> ALL =
      java.util.List.of(COUNT, GIVE_BACK, VALUE_GET, VALUE_SET, TIME);

  final String body;
  final String sha;

  private Script(String resource) {
    try (InputStream in = Script.class.getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("missing script " + resource);
      }
      this.body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      this.sha =
          HexFormat.of()
              .formatHex(
                  MessageDigest.getInstance("SHA-1").digest(body.getBytes(StandardCharsets.UTF_8)));
    } catch (IOException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot read script " + resource, e);
    }
  }

  /**
   * Sends the script by its SHA-1 alone, on the node of {@code keys[0]}: a server that does not
   * hold it fails the future with {@link RedisNoScriptException} ({@link #noScript}), and {@link
   * #eval} sends it whole. For a caller that waits anyway and can send it again in its own thread.
   */
  <T> CompletableFuture<T> send(
      RedisScriptingAsyncCommands<String, String> redis,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    return redis.<T>evalsha(sha, type, keys, args).toCompletableFuture();
  }

  /** Sends the script whole ({@code EVAL}), which also caches it on the server. */
  <T> CompletableFuture<T> eval(
      RedisScriptingAsyncCommands<String, String> redis,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    return redis.<T>eval(body, type, keys, args).toCompletableFuture();
  }

  /** Whether a call failed because the server did not hold the script. */
  static boolean noScript(Throwable e) {
    return cause(e) instanceof RedisNoScriptException;
  }

  /** What failed, out of the {@link CompletionException} a dependent stage wraps it in. */
  private static Throwable cause(Throwable e) {
    return e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
  }

  /** Runs the script on the node of {@code keys[0]} (any node when there are none). */
  <T> CompletableFuture<T> run(
      RedisScriptingAsyncCommands<String, String> redis,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    return resending(false, 0, redis, type, keys, args);
  }

  /**
   * {@link #run}, sent whole after {@code NOSCRIPT} only before {@code deadline} ({@link
   * System#nanoTime}): a script sent later would count a decision its caller has given up on.
   */
  <T> CompletableFuture<T> runBefore(
      long deadline,
      RedisScriptingAsyncCommands<String, String> redis,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    return resending(true, deadline, redis, type, keys, args);
  }

  /**
   * Sent by SHA-1, and whole after {@code NOSCRIPT} unless {@code bounded} and past {@code
   * deadline}.
   */
  private <T> CompletableFuture<T> resending(
      boolean bounded,
      long deadline,
      RedisScriptingAsyncCommands<String, String> redis,
      ScriptOutputType type,
      String[] keys,
      String... args) {
    return this.<T>send(redis, type, keys, args)
        .exceptionallyCompose(
            e ->
                noScript(e) && (!bounded || deadline - System.nanoTime() > 0)
                    ? this.<T>eval(redis, type, keys, args)
                    : CompletableFuture.failedFuture(cause(e)));
  }
}
