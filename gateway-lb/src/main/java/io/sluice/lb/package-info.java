/**
 * Load balancing for Sluice clusters: {@link io.sluice.lb.ClusterBalancer} (one per cluster, shared
 * by all event loops) with an EDF weighted scheduler and slow-start warm-up, round robin, random and
 * least-request policies, panic mode, active health checking on an injected scheduler (probe
 * transport behind {@link io.sluice.lb.HealthProbe}) and passive outlier ejection. Depends on
 * gateway-core and the JDK only.
 *
 * <p>Pick cost, measured with the opt-in {@code PickCostCheck} test (not JMH; a 2-core machine shared
 * with other builds, load average ≈ 3, so treat as an upper bound): single thread, weighted round
 * robin with slow start on, about 70–130 ns at 3 hosts and 130–185 ns at 1000 hosts; with 2–4 threads
 * contending for the one scheduler lock on 2 busy cores, 0.2–1.7 µs wall time per pick per thread.
 * The JMH matrix in gateway-bench is the reference.
 */
package io.sluice.lb;
