package dev.sluice.http;

import java.util.List;
import java.util.Map;

/** The rules in force, compiled: what a decision reads, swapped whole on a change. */
@SuppressWarnings("ArrayRecordComponent") // the hot path walks the array; never compared
record CompiledRules(
    RuleSet rules,
    boolean enabled,
    ActiveRule[] active,
    RuleIndex index,
    List<Rule> bound,
    Map<String, ActiveRule> boundActive,
    ClientAddress clients,
    SheddingPlan shed,
    boolean holdsSlots,
    List<String> knobProblems) {}
