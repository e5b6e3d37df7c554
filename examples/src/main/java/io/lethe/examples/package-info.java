/**
 * Runnable jobs on the Lethe backend. {@link io.lethe.examples.ClickWindows}: page views per page
 * in tumbling event-time windows over a click stream (the README's main job).
 * {@link io.lethe.examples.TtlDedup}: de-duplication of an at-least-once click stream with TTL
 * state. Both run locally on a MiniCluster with a generated stream ({@link
 * io.lethe.examples.LocalRun}) or on a cluster reading a Kafka topic.
 */
package io.lethe.examples;
