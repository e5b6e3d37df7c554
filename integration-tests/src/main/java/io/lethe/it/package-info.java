/** MiniCluster and Kafka integration tests: arrive with the examples and Kafka issue. */
package io.lethe.it;
