/**
 * Sluice's core: limiting keys ({@code dev.sluice}) and the store SPI ({@code dev.sluice.spi}). The
 * counting algorithms are the engine's alone and not exported. HTTP rules ({@code
 * dev.sluice.http}), the control plane ({@code dev.sluice.control}) and load shedding ({@code
 * dev.sluice.shedding}) are modules of their own above this one.
 */
module dev.sluice.core {
  requires org.slf4j;

  exports dev.sluice;
  exports dev.sluice.spi;

  uses dev.sluice.spi.CounterStoreProvider;
}
