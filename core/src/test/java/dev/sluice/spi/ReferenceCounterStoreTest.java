package dev.sluice.spi;

/** The reference store meets the contract, so the contract itself is sound. */
class ReferenceCounterStoreTest extends CounterStoreContract implements SharedValuesContract {
  @Override
  protected CounterStore createStore() {
    return new ReferenceCounterStore();
  }
}
