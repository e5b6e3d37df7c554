/** Runnable example jobs: arrive with the examples and Kafka issue. */
package io.lethe.examples;
