#!/usr/bin/env bash
# Runs Nexmark q1, q2, q5-counts, q7 and q12 on Kafka Streams and on Eddy against
# one Apache Kafka broker, alternately, and prints the side-by-side table
# (bench/kstreams/README.md). Builds the Kafka Streams program with Maven
# and eddy and ksbench with Go first.
#
#   bench/kstreams/run.sh HOST:PORT [ksbench flags: --events --runs --queries --systems --guarantee --json FILE]
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 1; }

root=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: bench/kstreams/run.sh HOST:PORT [ksbench flags]" >&2; exit 2; }
broker=$1
shift
command -v java >/dev/null || die "no java on PATH (Kafka Streams needs Java 17)"
command -v mvn >/dev/null || die "no mvn on PATH"
command -v go >/dev/null || die "no go on PATH"
host=${broker%:*}
port=${broker##*:}
timeout 5 bash -c "exec 3<>/dev/tcp/$host/$port" 2>/dev/null ||
  die "no broker answers at $broker (start one: EDDY_KAFKA_PORT=$port scripts/kafka.sh start)"

target=$root/bench/kstreams/target
if ! log=$(timeout "${EDDY_KSBENCH_RESOLVE_TIMEOUT:-600}" mvn -B -q -f "$root/bench/kstreams/pom.xml" \
  compile dependency:copy-dependencies 2>&1); then
  die "the Maven build of bench/kstreams failed: $(grep -m1 ERROR <<<"$log" || tail -1 <<<"$log")"
fi
(cd "$root" && go build -o "$target/eddy" ./cmd/eddy && go build -o "$target/ksbench" ./bench/kstreams/ksbench) ||
  die "go build failed"
exec "$target/ksbench" --brokers "$broker" --eddy "$target/eddy" --testdata "$root/testdata" \
  --classpath "$target/classes:$target/lib/*" "$@"
