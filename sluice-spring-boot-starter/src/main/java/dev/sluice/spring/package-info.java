/**
 * The Spring Boot starter: {@link dev.sluice.spring.SluiceAutoConfiguration} builds the limiter
 * from {@code sluice.*} properties ({@link dev.sluice.spring.SluiceProperties}), registers the
 * servlet filter, the actuator endpoint and health indicator, and Micrometer metrics when they are
 * on the class path. Unknown {@code sluice.*} properties are reported at start.
 */
package dev.sluice.spring;
