#!/usr/bin/env bash
# Runs a single-node Apache Kafka 4.4.0 broker (KRaft, combined
# broker+controller, loopback only) for Eddy's tests and for trying Eddy
# against the real thing:
#
#   export EDDY_TEST_KAFKA=$(scripts/kafka.sh start)   # prints 127.0.0.1:19092
#   scripts/kafka.sh status
#   scripts/kafka.sh stop
#
# Commands:
#   start   resolve the jars (once), format the data directory (once), start
#           the broker in the background and wait until it answers a Metadata
#           request; print its bootstrap address on stdout. If our broker is
#           already running, just print its address.
#   stop    SIGTERM, wait for a clean shutdown, then SIGKILL (with a message).
#           Stopping a broker that is not running is not an error.
#   status  print whether it runs. Exit status: 0 running and answering,
#           1 its process is alive but does not answer, 3 not running (the
#           LSB convention for init scripts).
#   clean   delete the broker's data directory (its topics); refuses while
#           it runs. The jars stay in the cache.
#
# Environment (defaults in brackets):
#   EDDY_KAFKA_PORT             client port on 127.0.0.1 [19092]
#   EDDY_KAFKA_CONTROLLER_PORT  KRaft controller port [EDDY_KAFKA_PORT+1]
#   EDDY_KAFKA_HOME             jar cache [~/.cache/eddy/kafka-4.4.0]
#   EDDY_KAFKA_DIR              config, data, pid and log of this broker
#                               [$EDDY_KAFKA_HOME/broker-$EDDY_KAFKA_PORT]
#   EDDY_KAFKA_HEAP             JVM heap flags [-Xms256m -Xmx768m]
#   EDDY_KAFKA_JAVA_OPTS        more JVM flags []
#   EDDY_KAFKA_PROPERTIES       broker settings over the script's, as
#                               key=value words, e.g. to try a production
#                               default: "transaction.max.timeout.ms=900000"
#   EDDY_KAFKA_START_TIMEOUT    seconds start waits for the broker [60]
#   EDDY_KAFKA_STOP_TIMEOUT     seconds stop waits before SIGKILL [30]
#   EDDY_KAFKA_RESOLVE_TIMEOUT  seconds Maven may take to resolve [600]
#   JAVA_HOME                   java is $JAVA_HOME/bin/java if set, else
#                               the java on PATH (17 or newer)
#
# Every failure is one line on stderr starting with "kafka.sh:" (followed by
# the last lines of the broker's log if the broker failed) and a non-zero
# exit status; every wait is bounded. Jars come only from the Maven
# repositories Maven is configured with (Maven Central by default), pinned by
# scripts/kafka/pom.xml.
set -euo pipefail

readonly kafka_version=4.4.0
script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly pom=$script_dir/kafka/pom.xml

port=${EDDY_KAFKA_PORT:-19092}
controller_port=${EDDY_KAFKA_CONTROLLER_PORT:-}
home=${EDDY_KAFKA_HOME:-${HOME:?HOME is not set}/.cache/eddy/kafka-$kafka_version}
start_timeout=${EDDY_KAFKA_START_TIMEOUT:-60}
stop_timeout=${EDDY_KAFKA_STOP_TIMEOUT:-30}
resolve_timeout=${EDDY_KAFKA_RESOLVE_TIMEOUT:-600}
heap=${EDDY_KAFKA_HEAP:--Xms256m -Xmx768m}

die() {
	echo "kafka.sh: $*" >&2
	exit 1
}

is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

check_uint() { is_uint "$2" || die "$1 must be a whole number, not '$2'"; }
check_uint EDDY_KAFKA_PORT "$port"
check_uint EDDY_KAFKA_START_TIMEOUT "$start_timeout"
check_uint EDDY_KAFKA_STOP_TIMEOUT "$stop_timeout"
check_uint EDDY_KAFKA_RESOLVE_TIMEOUT "$resolve_timeout"
((port > 0 && port < 65535)) || die "EDDY_KAFKA_PORT must be 1-65534, not $port"
if [ -z "$controller_port" ]; then
	controller_port=$((port + 1))
fi
if ! is_uint "$controller_port" || ((controller_port < 1 || controller_port > 65535)); then
	die "EDDY_KAFKA_CONTROLLER_PORT must be 1-65535, not $controller_port"
fi
((controller_port != port)) || die "the controller port must differ from the client port ($port)"

readonly addr=127.0.0.1:$port
dir=${EDDY_KAFKA_DIR:-$home/broker-$port}
readonly lib=$home/lib
readonly pidfile=$dir/broker.pid
readonly logfile=$dir/broker.log
readonly props=$dir/server.properties

# find_java sets java to a Java 17+ binary or fails.
find_java() {
	if [ -n "${JAVA_HOME:-}" ]; then
		java=$JAVA_HOME/bin/java
		[ -x "$java" ] || die "JAVA_HOME is $JAVA_HOME but $java is not an executable; Kafka $kafka_version needs Java 17 or newer"
	else
		java=$(command -v java) || die "no java on PATH; Kafka $kafka_version needs Java 17 or newer (Debian: apt-get install openjdk-17-jre-headless)"
	fi
	local v major
	v=$(timeout 30 "$java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1) || true
	major=${v%%.*}
	[ "$major" = 1 ] && major=$(echo "$v" | cut -d. -f2) # 1.8.0 is Java 8
	is_uint "${major:-x}" || die "cannot tell the version of $java from its -version; Kafka $kafka_version needs Java 17 or newer"
	((major >= 17)) || die "$java is Java $v; Kafka $kafka_version needs Java 17 or newer"
}

# resolve copies the broker's jars into $lib once. A stamp holding the pom's
# checksum marks a complete copy, so an interrupted or failed copy and a
# changed pom are both resolved again.
resolve() {
	local sum stamp=$lib/.resolved
	sum=$(cksum <"$pom")
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sum" ]; then
		return
	fi
	local mvn
	mvn=$(command -v mvn) || die "no mvn on PATH; it resolves Kafka $kafka_version from Maven Central once (Debian: apt-get install maven)"
	mkdir -p "$home"
	local tmp=$home/lib.tmp mvnlog=$home/resolve.log
	rm -rf "$tmp"
	echo "kafka.sh: resolving Kafka $kafka_version from Maven into $lib (once)" >&2
	local rc=0
	# The plugin by its full coordinates, so its version is pinned here and
	# an offline Maven names what it lacks.
	timeout "$resolve_timeout" "$mvn" -B -q --no-transfer-progress -Dstyle.color=never -f "$pom" \
		org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
		-DincludeScope=runtime -DoutputDirectory="$tmp" >"$mvnlog" 2>&1 || rc=$?
	if ((rc == 124)); then
		die "Maven did not resolve Kafka $kafka_version within ${resolve_timeout}s (EDDY_KAFKA_RESOLVE_TIMEOUT); see $mvnlog"
	elif ((rc != 0)); then
		local why
		# The first error line, without Maven's colour codes, is the cause.
		why=$(sed 's/\x1b\[[0-9;]*m//g' "$mvnlog" | grep -m 1 '^\[ERROR\] *[^ ]' | cut -c 9-400) || true
		die "Maven could not resolve Kafka $kafka_version (offline, or no access to Maven Central?): ${why:-exit status $rc}; full output in $mvnlog"
	fi
	[ -f "$tmp/kafka_2.13-$kafka_version.jar" ] || die "Maven finished but $tmp has no kafka_2.13-$kafka_version.jar; see $mvnlog"
	rm -rf "$lib"
	mv "$tmp" "$lib"
	echo "$sum" >"$stamp"
}

# running_pid prints the pid of our broker if it runs. The process must be a
# Kafka JVM started with this directory's config, so a stale pid file whose
# pid was reused by another process does not count.
running_pid() {
	[ -f "$pidfile" ] || return 1
	local pid args
	pid=$(cat "$pidfile")
	is_uint "$pid" || return 1
	args=$(ps -o args= -p "$pid" 2>/dev/null) || return 1
	[[ $args == *kafka.Kafka*"$props"* ]] || return 1
	echo "$pid"
}

# port_open says whether something accepts TCP connections on 127.0.0.1:$1.
port_open() {
	# shellcheck disable=SC2016 # $1 is the inner bash's
	timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"' _ "$1" 2>/dev/null
}

# answers says whether the broker answers a Metadata request (v4, no topics)
# and lists at least one broker, which it does once it is registered with
# its controller and unfenced: a request, not just a connect, so that ready
# means serving. The request is written by hand so the check needs no JVM
# (starting one costs ~1 s of CPU per try) and no Kafka client:
#   size 23 | api_key 3 | api_version 4 | correlation_id "EDDY" |
#   client_id "kafka.sh" | topics: empty array | allow_auto_topic_creation 0
# The response starts size | correlation_id | throttle_time_ms | broker count.
answers() {
	local hex
	# shellcheck disable=SC2016 # $1 is the inner bash's
	hex=$(timeout 3 bash -c '
		exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
		printf "\x00\x00\x00\x17\x00\x03\x00\x04EDDY\x00\x08kafka.sh\x00\x00\x00\x00\x00" >&3
		head -c 16 <&3 | od -An -v -tx1 | tr -d " \n"
	' _ "$port" 2>/dev/null) || return 1
	[ "${#hex}" = 32 ] && [ "${hex:8:8}" = 45444459 ] && [ "${hex:24:8}" != 00000000 ]
}

log_tail() {
	if ! [ -s "$logfile" ]; then
		echo "kafka.sh: $logfile is empty" >&2
		return
	fi
	echo "kafka.sh: last lines of $logfile:" >&2
	tail -n 20 "$logfile" | sed 's/^/  /' >&2
}

write_config() {
	mkdir -p "$dir/data"
	# Test settings: one node, so every internal topic has one replica;
	# topics Eddy's clients auto-create get 4 partitions like the embedded
	# broker's (host/embedded); no delay before a new group's first
	# rebalance; transactions as long as Eddy's longest (10 x the largest
	# commit interval, 1 h) and timed-out ones aborted within ~1 s instead
	# of 10 s, which matters to crash tests that kill a node mid-transaction;
	# a log cleaner that looks for work every second with a small buffer,
	# to fit the small heap.
	cat >"$props" <<EOF
# Written by scripts/kafka.sh on each start; edit the script, not this file.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$controller_port
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data

num.partitions=4
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=8
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=8
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
transaction.max.timeout.ms=36000000
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
log.cleaner.backoff.ms=1000
log.cleaner.dedupe.buffer.size=33554432
log.retention.ms=-1
EOF
	# The caller's settings last: in a properties file the last one wins.
	if [ -n "${EDDY_KAFKA_PROPERTIES:-}" ]; then
		echo "# EDDY_KAFKA_PROPERTIES" >>"$props"
		local kv kvs
		read -r -d '' -a kvs <<<"$EDDY_KAFKA_PROPERTIES" || true
		for kv in "${kvs[@]}"; do
			[[ $kv == ?*=* ]] || die "EDDY_KAFKA_PROPERTIES holds '$kv', not key=value"
			echo "$kv" >>"$props"
		done
	fi
	cat >"$dir/log4j2.properties" <<'EOF'
# Written by scripts/kafka.sh. Logs go to stdout, which the script sends to
# broker.log together with anything the JVM itself prints. No shutdown hook
# of its own: Kafka's hook logs the broker's shutdown to its end.
status = warn
shutdownHook = disable
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

# format writes the KRaft metadata of a new single-node quorum, once.
format() {
	[ -f "$dir/data/meta.properties" ] && return
	# A cluster id is 16 random bytes in URL-safe base64 without padding,
	# what "kafka-storage random-uuid" prints; made here to spare a JVM start.
	# Like Kafka, skip ids that start with "-", which read as an option.
	local id=- out hex
	while [[ $id == -* ]]; do
		hex=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n' | sed 's/../\\x&/g')
		id=$(printf '%b' "$hex" | base64 | tr '+/' '-_' | tr -d '=\n')
		[ "${#id}" = 22 ] || die "could not make a cluster id from /dev/urandom (got '$id')"
	done
	out=$(timeout "$((start_timeout + 30))" "$java" -Dlog4j2.configurationFile="$dir/log4j2.properties" \
		-cp "$lib/*" kafka.tools.StorageTool format --standalone --cluster-id "$id" --config "$props" 2>&1) ||
		die "formatting $dir/data failed: $(echo "$out" | grep -v '^\[' | tail -n 1)"
}

cmd_start() {
	local pid
	if pid=$(running_pid); then
		if answers; then
			echo "$addr"
			return
		fi
		die "our broker (pid $pid) runs but does not answer on $addr; see $logfile, or run: $0 stop"
	fi
	rm -f "$pidfile"
	find_java
	# Before resolving, so a taken port fails at once. Kafka would also fail
	# to bind it, but only after its JVM started.
	local p
	for p in "$port" "$controller_port"; do
		if port_open "$p"; then
			die "port 127.0.0.1:$p is already in use by another process; pick free ports with EDDY_KAFKA_PORT (and EDDY_KAFKA_CONTROLLER_PORT)"
		fi
	done
	resolve
	write_config
	format
	[ -f "$logfile" ] && mv -f "$logfile" "$logfile.1"
	local launch=()
	# Its own session, so a Ctrl-C or hangup meant for the caller does not
	# reach the broker; stop is what stops it. Its output goes to the log,
	# never to our stdout: a caller's $(kafka.sh start) waits for that to
	# close. It does not inherit the lock (fd 9).
	command -v setsid >/dev/null && launch=(setsid)
	# Kafka's own GC flags (kafka-run-class.sh), unless the caller picks a
	# collector: the JVM refuses two.
	local gc=(-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExplicitGCInvokesConcurrent)
	[[ ${EDDY_KAFKA_JAVA_OPTS:-} =~ -XX:\+Use[A-Za-z]+GC ]] && gc=()
	# shellcheck disable=SC2086 # heap and java opts are lists of flags
	"${launch[@]}" "$java" $heap "${gc[@]}" \
		-Djava.awt.headless=true -Dlog4j2.configurationFile="$dir/log4j2.properties" \
		${EDDY_KAFKA_JAVA_OPTS:-} -cp "$lib/*" kafka.Kafka "$props" </dev/null >"$logfile" 2>&1 9>&- &
	pid=$!
	echo "$pid" >"$pidfile"
	local deadline=$((SECONDS + start_timeout))
	while ! answers; do
		if ! kill -0 "$pid" 2>/dev/null; then
			local rc=0
			wait "$pid" || rc=$?
			rm -f "$pidfile"
			echo "kafka.sh: the broker exited with status $rc while starting; see $logfile" >&2
			log_tail
			exit 1
		fi
		if ((SECONDS > deadline)); then
			kill -KILL "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
			rm -f "$pidfile"
			echo "kafka.sh: the broker did not answer on $addr within ${start_timeout}s (EDDY_KAFKA_START_TIMEOUT); killed it; see $logfile" >&2
			log_tail
			exit 1
		fi
		sleep 0.2
	done
	echo "$addr"
}

cmd_stop() {
	local pid
	if ! pid=$(running_pid); then
		rm -f "$pidfile"
		echo "kafka.sh: not running ($addr)" >&2
		return
	fi
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + stop_timeout))
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS > deadline)); then
			echo "kafka.sh: the broker (pid $pid) did not stop within ${stop_timeout}s of SIGTERM (EDDY_KAFKA_STOP_TIMEOUT); killed it with SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.1
	done
	rm -f "$pidfile"
}

cmd_status() {
	local pid
	if ! pid=$(running_pid); then
		echo "not running ($addr)"
		exit 3
	fi
	if answers; then
		echo "running $addr (pid $pid, $dir)"
		return
	fi
	echo "running but not answering on $addr (pid $pid, see $logfile)"
	exit 1
}

cmd_clean() {
	if pid=$(running_pid); then
		die "the broker runs (pid $pid); stop it first: $0 stop"
	fi
	rm -rf "$dir"
}

# lock holds this broker's lock until the script exits, so that two starts
# at once (say, two test packages) do not both format and launch, and a stop
# does not race a start. Without flock (not on macOS) there is no lock.
lock() {
	command -v flock >/dev/null || return 0
	mkdir -p "$dir"
	exec 9>"$dir/lock"
	flock -w "$((resolve_timeout + start_timeout + stop_timeout))" 9 ||
		die "another kafka.sh holds $dir/lock for too long"
}

case "${1:-}" in
start)
	lock
	cmd_start
	;;
stop)
	lock
	cmd_stop
	;;
status) cmd_status ;;
clean)
	lock
	cmd_clean
	;;
*)
	echo "usage: $0 start|stop|status|clean  (see the comment at the top of $0)" >&2
	exit 2
	;;
esac
