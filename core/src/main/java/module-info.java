/**
 * Sluice's core: limiting keys ({@code dev.sluice}), HTTP requests ({@code dev.sluice.http}),
 * throttles and knobs ({@code dev.sluice.control}), the worker shedder ({@code
 * dev.sluice.shedding}) and the store SPI ({@code dev.sluice.spi}). The counting algorithms are the
 * engine's alone and not exported.
 */
module dev.sluice.core {
  requires org.slf4j;

  exports dev.sluice;
  exports dev.sluice.control;
  exports dev.sluice.http;
  exports dev.sluice.shedding;
  exports dev.sluice.spi;

  uses dev.sluice.spi.CounterStoreProvider;
  uses dev.sluice.shedding.AdaptiveCapacityProvider;
}
