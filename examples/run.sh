#!/usr/bin/env bash
# Runs an example trainer on the local demo setup (software switch + P worker processes)
# and compares it with the same model trained in one process. Arguments go to the
# example's command line, e.g.
#   examples/run.sh --trainer plain --workers 2 --backend netreduce
#   examples/run.sh --trainer dl4j  --workers 2 --backend ring
#   examples/run.sh --help
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
# Build the examples and the modules they need, and write the run-time class path.
mvn -B -q -pl examples -am package -DskipTests \
    dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dmdep.includeScope=runtime
# ND4J's OpenMP threads spin while they wait; with several workers on few cores that
# starves the others, so give each worker one thread unless told otherwise.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
exec java -cp "examples/target/classes:$(cat examples/target/classpath.txt)" \
    io.netreduce.examples.launch.TrainExample "$@"
