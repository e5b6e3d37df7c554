package io.lethe.flink.testing.cyclefixture.right;

import io.lethe.flink.testing.cyclefixture.left.Left;

/** The other half of a deliberate import cycle, which the dependency rules must reject. */
public final class Right {
    Left partner;
}
