/**
 * Netflix's adaptive limits ({@code concurrency-limits-core}) as the worker shedder's {@link
 * dev.sluice.shedding.AdaptiveCapacity}: {@link dev.sluice.shedding.adaptive.NetflixCapacity}, and
 * the provider that lets the rules name them ({@code workers: { adaptive: gradient2 }}).
 */
package dev.sluice.shedding.adaptive;
