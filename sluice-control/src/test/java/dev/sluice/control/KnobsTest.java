package dev.sluice.control;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.sluice.Background;
import dev.sluice.spi.ReferenceCounterStore;
import dev.sluice.spi.SharedValues;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class KnobsTest {

  private final ReferenceCounterStore store = new ReferenceCounterStore();
  private final SharedValues values = store.sharedValues().orElseThrow();

  @Test
  void knobsRoundTripThroughTheirStoredText() {
    Knobs k =
        Knobs.NONE
            .with("global", "enabled", "false")
            .with("rule:search", "limit", "2")
            .with("rule:search", "shadow", "TRUE")
            .with("throttle:email", "rate", "0.50");
    assertEquals(
        "global enabled=false\nrule:search limit=2 shadow=true\nthrottle:email rate=0.5\n",
        k.format());
    assertEquals(k, Knobs.parse(k.format()));
    assertFalse(k.enabled());
    assertEquals(OptionalLong.of(2), k.ruleLimit("search"));
    assertEquals(0.5, k.throttleRate("email").orElseThrow());
    assertTrue(k.ruleEnabled("search").isEmpty());
    assertEquals(Knobs.NONE, k.without("global").without("rule:search").without("throttle:email"));
  }

  @Test
  void badTargetsFieldsAndValuesAreRefusedWithTheirReason() {
    assertMessage("unknown target 'rules:x'", () -> Knobs.NONE.with("rules:x", "limit", "2"));
    assertMessage("unknown field 'rate' for rule", () -> Knobs.NONE.with("rule:x", "rate", "2"));
    assertMessage("at least 1, not -3", () -> Knobs.NONE.with("rule:x", "limit", "-3"));
    assertMessage("true or false", () -> Knobs.NONE.with("global", "enabled", "no"));
    assertMessage("rate is permits", () -> Knobs.NONE.with("throttle:x", "rate", "-0.5"));
    assertMessage("burst is a multiplier", () -> Knobs.NONE.with("throttle:x", "burst", "0"));
    assertMessage("line 2 (rule:b)", () -> Knobs.parse("rule:a limit=1\nrule:b limit=x\n"));
  }

  @Test
  void aMalformedStoredLineKeepsItsTargetsLastGoodValueAndTheOthersChange() {
    KnobWatcher w = KnobWatcher.manual(values);
    List<Knobs> heard = new ArrayList<>();
    w.listen(heard::add);
    Knobs.change(values, k -> k.with("rule:a", "limit", "5").with("rule:b", "limit", "7"));
    w.refresh();
    assertEquals(OptionalLong.of(5), w.current().ruleLimit("a"));
    write("rule:a limit=banana\nrule:b limit=8\n");
    w.refresh();
    assertEquals(OptionalLong.of(5), w.current().ruleLimit("a"), "a's last good value stays");
    assertEquals(OptionalLong.of(8), w.current().ruleLimit("b"), "b's new value arrives");
    assertEquals(3, heard.size(), "told of: none, the first set, the change");
  }

  @Test
  void aStoreThatCannotBeReadLeavesTheLastGoodKnobsInForce() {
    KnobWatcher w = KnobWatcher.manual(values);
    Knobs.change(values, k -> k.with("global", "enabled", "false"));
    w.refresh();
    store.failWith(new IllegalStateException("store down"));
    w.refresh();
    assertFalse(w.current().enabled(), "still off: a dead store is not a cleared knob");
  }

  @Test
  void clearedKnobsAreNoKnobs() {
    KnobWatcher w = KnobWatcher.manual(values);
    Knobs.change(values, k -> k.with("rule:a", "enabled", "false"));
    w.refresh();
    Knobs.change(values, k -> k.without("rule:a"));
    w.refresh();
    assertEquals(Knobs.NONE, w.current());
  }

  @Test
  void concurrentWritersNeverLoseEachOthersKnob() throws Exception {
    List<Thread> writers = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      int n = i;
      writers.add(
          new Thread(
              () -> {
                for (int j = 1; j <= 20; j++) {
                  String limit = Integer.toString(j);
                  Knobs.change(values, k -> k.with("rule:r" + n, "limit", limit));
                }
              }));
    }
    writers.forEach(Thread::start);
    for (Thread t : writers) {
      t.join();
    }
    Knobs k = Knobs.parse(values.get(Knobs.VALUE_NAME).orElseThrow().value());
    for (int i = 0; i < 8; i++) {
      assertEquals(OptionalLong.of(20), k.ruleLimit("r" + i));
    }
  }

  @Test
  void theWatcherRefusesANonPositiveRefresh() {
    assertThrows(
        IllegalArgumentException.class,
        () -> KnobWatcher.start(values, Duration.ZERO, Background.shared()));
  }

  private void write(String text) {
    SharedValues.Versioned v = values.get(Knobs.VALUE_NAME).orElseThrow();
    assertTrue(values.compareAndSet(Knobs.VALUE_NAME, v.version(), text, Duration.ZERO));
  }

  private static void assertMessage(String part, org.junit.jupiter.api.function.Executable e) {
    IllegalArgumentException x = assertThrows(IllegalArgumentException.class, e);
    assertTrue(x.getMessage().contains(part), x.getMessage());
  }
}
