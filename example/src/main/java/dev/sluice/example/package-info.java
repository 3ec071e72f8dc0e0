/** The runnable demo. */
package dev.sluice.example;
