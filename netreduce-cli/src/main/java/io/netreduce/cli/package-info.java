/** netreduce-cli: the {@code netreduce} command (docs/cli.md); where it sits, docs/architecture.md. */
package io.netreduce.cli;
