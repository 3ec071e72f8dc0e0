/** The YAML rules file: reading it with errors that name the line and field, and watching it. */
package dev.sluice.yaml;
