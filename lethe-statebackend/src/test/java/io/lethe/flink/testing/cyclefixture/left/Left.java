package io.lethe.flink.testing.cyclefixture.left;

import io.lethe.flink.testing.cyclefixture.right.Right;

/** Half of a deliberate import cycle, which the dependency rules must reject. */
public final class Left {
    Right partner;
}
