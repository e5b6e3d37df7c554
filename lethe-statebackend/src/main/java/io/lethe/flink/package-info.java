/** The Flink keyed state backend on the Lethe engine: arrives with the Flink backend issue. */
package io.lethe.flink;
