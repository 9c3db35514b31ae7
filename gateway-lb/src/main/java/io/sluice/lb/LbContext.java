package io.sluice.lb;

import io.sluice.core.time.Scheduler;

import java.util.random.RandomGenerator;

/**
 * What a {@link ClusterBalancer} needs from its surroundings: a scheduler (and its clock) for
 * health checks, ejection and slow start, and a random source (seeded in tests).
 *
 * @param scheduler time and scheduling
 * @param random    randomness for pre-picks, jitter and random policies
 */
public record LbContext(Scheduler scheduler, RandomGenerator random) {
}
