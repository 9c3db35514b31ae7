/**
 * Load balancing for Sluice clusters: {@link ClusterBalancer} (one per cluster, shared
 * by all event loops) with an EDF weighted scheduler and slow-start warm-up, round robin, random and
 * least-request policies, panic mode, active health checking on an injected scheduler (probe
 * transport behind {@link HealthProbe}) and passive outlier ejection. Depends on
 * gateway-core and the JDK only.
 *
 * <p>Pick cost: one shared EDF scheduler per cluster under a short lock; a pick re-queues the host
 * in a heap packed into one {@code long[]} and reads its cached effective weight (slow-start factors
 * are refreshed on the cluster's warm-up grid, not per pick), allocating nothing. Measured figures,
 * commands and the before/after comparison are in {@code docs/perf/2026-11-23-edf-pick/}; the
 * opt-in {@code PickCostCheck} test gives a rough JMH-free look.
 */
package io.sluice.lb;
