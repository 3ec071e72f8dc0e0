package dev.sluice.yaml;

import dev.sluice.http.PriorityClass;
import dev.sluice.http.Shedding;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;

/** The {@code loadShedding} section. */
final class SheddingReader extends Fields {

  SheddingReader(String file) {
    super(file);
  }

  /**
   * {@code loadShedding}: {@code classes} (first match wins; Stripe's defaults when absent), {@code
   * fleet: { capacity, reserve, slotTtl }}, {@code workers: { threads | adaptive, delay, ramp }},
   * and {@code retryAfter}.
   */
  Shedding shedding(Node node, String f) {
    Map<String, Node> m = mapping(node, f, Set.of("classes", "fleet", "workers", "retryAfter"));
    Shedding.Builder b = Shedding.builder();
    if (m.containsKey("classes")) {
      List<Node> items = sequence(m.get("classes"), f + ".classes");
      List<PriorityClass> classes = new ArrayList<>();
      for (int i = 0; i < items.size(); i++) {
        classes.add(priorityClass(items.get(i), f + ".classes[" + i + "]"));
      }
      check(m.get("classes"), f + ".classes", () -> b.classes(classes));
    }
    if (m.containsKey("fleet")) {
      String ff = f + ".fleet";
      Map<String, Node> fm = mapping(m.get("fleet"), ff, Set.of("capacity", "reserve", "slotTtl"));
      long capacity = limit(require(fm, m.get("fleet"), ff, "capacity"), ff + ".capacity");
      double reserve = 0.2;
      if (fm.containsKey("reserve")) {
        reserve = fraction(fm.get("reserve"), ff + ".reserve");
      }
      double r = reserve;
      check(m.get("fleet"), ff, () -> b.fleet(capacity, r));
      if (fm.containsKey("slotTtl")) {
        Duration ttl = duration(fm.get("slotTtl"), ff + ".slotTtl");
        check(fm.get("slotTtl"), ff + ".slotTtl", () -> b.slotTtl(ttl));
      }
    }
    if (m.containsKey("workers")) {
      String wf = f + ".workers";
      Map<String, Node> wm =
          mapping(m.get("workers"), wf, Set.of("threads", "adaptive", "delay", "ramp"));
      if (wm.containsKey("threads") == wm.containsKey("adaptive")) {
        throw error(m.get("workers"), wf, "give threads (a number) or adaptive, one of them");
      }
      if (wm.containsKey("threads")) {
        long t = wholeNumber(wm.get("threads"), wf + ".threads");
        check(wm.get("threads"), wf + ".threads", () -> b.workers((int) Math.min(t, 1 << 20)));
      } else {
        String a = scalar(wm.get("adaptive"), wf + ".adaptive");
        check(wm.get("adaptive"), wf + ".adaptive", () -> b.adaptive(a));
      }
      if (wm.containsKey("delay")) {
        Duration delay = duration(wm.get("delay"), wf + ".delay");
        check(wm.get("delay"), wf + ".delay", () -> b.delay(delay));
      }
      if (wm.containsKey("ramp")) {
        Duration ramp = duration(wm.get("ramp"), wf + ".ramp");
        check(wm.get("ramp"), wf + ".ramp", () -> b.ramp(ramp));
      }
    }
    if (m.containsKey("retryAfter")) {
      b.retryAfter(duration(m.get("retryAfter"), f + ".retryAfter"));
    }
    return b.build();
  }

  /** One priority class: {@code { name, priority, match: { methods, path | prefix, headers } }}. */
  PriorityClass priorityClass(Node node, String f) {
    Map<String, Node> m = mapping(node, f, Set.of("name", "priority", "match"));
    String name = scalar(require(m, node, f, "name"), f + ".name");
    Node pn = require(m, node, f, "priority");
    String ptext = scalar(pn, f + ".priority").trim();
    int priority;
    if (ptext.equals("critical")) {
      priority = PriorityClass.CRITICAL;
    } else {
      try {
        priority = Integer.parseInt(ptext);
      } catch (NumberFormatException e) {
        throw error(pn, f + ".priority", "use critical (0) or a whole number: '" + ptext + "'");
      }
    }
    int p = priority;
    PriorityClass c = check(node, f, () -> PriorityClass.of(name, p));
    if (!m.containsKey("match")) {
      return c;
    }
    String mf = f + ".match";
    Node matchNode = m.get("match");
    Map<String, Node> mm = mapping(matchNode, mf, Set.of("methods", "path", "prefix", "headers"));
    if (mm.containsKey("methods")) {
      c = c.withMethods(methods(mm.get("methods"), mf + ".methods"));
    }
    if (mm.containsKey("path") && mm.containsKey("prefix")) {
      throw error(matchNode, mf, "give path or prefix, not both");
    }
    PriorityClass base = c;
    if (mm.containsKey("path")) {
      String v = scalar(mm.get("path"), mf + ".path");
      c = check(mm.get("path"), mf + ".path", () -> base.withPath(v));
    } else if (mm.containsKey("prefix")) {
      String v = scalar(mm.get("prefix"), mf + ".prefix");
      c = check(mm.get("prefix"), mf + ".prefix", () -> base.withPrefix(v));
    }
    if (mm.containsKey("headers")) {
      Node hn = mm.get("headers");
      if (!(hn instanceof MappingNode map)) {
        throw error(hn, mf + ".headers", "expected a mapping of header name to value");
      }
      for (NodeTuple t : map.getValue()) {
        String h = scalar(t.getKeyNode(), mf + ".headers");
        String v = scalar(t.getValueNode(), mf + ".headers." + h);
        c = c.withHeader(h, v);
      }
    }
    return c;
  }
}
