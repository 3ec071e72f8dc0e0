/**
 * Sluice's core: limiting keys ({@code dev.sluice}) and the store SPI ({@code dev.sluice.spi}). The
 * engine ({@code dev.sluice.engine}) and its counting algorithms are not exported to applications:
 * only the HTTP, control and two-layer modules reach the engine. HTTP rules ({@code
 * dev.sluice.http}), the control plane ({@code dev.sluice.control}) and load shedding ({@code
 * dev.sluice.shedding}) are modules of their own above this one.
 *
 * <p>The modules the engine is exported to are built after this one, so the compiler cannot see
 * them here.
 */
@SuppressWarnings("module")
module dev.sluice.core {
  requires org.slf4j;

  exports dev.sluice;
  exports dev.sluice.spi;
  exports dev.sluice.engine to
      dev.sluice.http,
      dev.sluice.control,
      dev.sluice.twolayer;

  uses dev.sluice.spi.CounterStoreProvider;
  uses dev.sluice.engine.TwoLayer.Provider;
}
