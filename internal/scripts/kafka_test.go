package scripts

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/host"
)

// kafkaScript is scripts/kafka.sh, from this package's directory.
var kafkaScript = filepath.Join("..", "..", "scripts", "kafka.sh")

// tools are the commands kafka.sh runs besides java and mvn. A test's PATH
// holds links to the real ones, so that it lacks exactly what the test
// takes away. The script does without the optional ones (not on macOS).
var (
	tools         = []string{"bash", "base64", "cat", "cksum", "cut", "dirname", "grep", "head", "mkdir", "mv", "od", "ps", "rm", "sed", "sleep", "tail", "timeout", "tr"}
	optionalTools = []string{"flock", "setsid"}
)

// Fake tools. The fake java answers -version as Java 17 would (or as
// javaVersion says) and, run as the broker (kafka.Kafka), does what broker
// says. The fake mvn either copies a stand-in kafka jar where
// copy-dependencies would copy the real ones, or fails as Maven does
// offline, colour codes and all.
const (
	fakeJava = `#!/bin/sh
case " $* " in
*" -version "*) echo 'openjdk version "%s" 2025-04-15' >&2; exit 0 ;;
*kafka.tools.StorageTool*) exit 0 ;;
*kafka.Kafka*) %s ;;
esac
exit 9
`
	brokerExits = `echo "Error: the fake broker gives up"; exit 3`
	// brokerHangs never answers and ignores SIGTERM; SIGKILL ends it.
	brokerHangs  = `trap '' TERM; while :; do sleep 0.1; done`
	mvnResolves  = "#!/bin/sh\nfor a; do case $a in -DoutputDirectory=*) d=${a#-DoutputDirectory=} ;; esac; done\nmkdir -p \"$d\" && : >\"$d/kafka_2.13-4.4.0.jar\"\n"
	mvnIsOffline = "#!/bin/sh\nprintf '\\033[0m\\033[0m[ERROR] Plugin org.apache.maven.plugins:maven-dependency-plugin:3.8.1 or one of its dependencies could not be resolved: Cannot access central (https://repo.maven.apache.org/maven2) in offline mode -> [Help 1]\\n[ERROR] \\n'\nexit 1\n"
)

// setup is a machine for kafka.sh: a PATH of links to the tools plus the
// given fakes, a home, and two free loopback ports.
type setup struct {
	bin, home, cache string
	port, ctrlPort   int
}

func newSetup(t *testing.T, fakes map[string]string) *setup {
	t.Helper()
	root := t.TempDir()
	s := &setup{bin: filepath.Join(root, "bin"), home: filepath.Join(root, "home"), cache: filepath.Join(root, "cache")}
	if err := os.Mkdir(s.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(tool string) error {
		p, err := exec.LookPath(tool)
		if err != nil {
			return err
		}
		return os.Symlink(p, filepath.Join(s.bin, tool))
	}
	for _, tool := range tools {
		if err := link(tool); err != nil {
			t.Fatalf("kafka.sh needs %s: %v", tool, err)
		}
	}
	for _, tool := range optionalTools {
		if err := link(tool); err != nil && !errors.Is(err, exec.ErrNotFound) {
			t.Fatal(err)
		}
	}
	for name, text := range fakes {
		if err := os.WriteFile(filepath.Join(s.bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s.port, s.ctrlPort = freePort(t), freePort(t)
	return s
}

// freePort is a loopback port nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (s *setup) dir() string { return filepath.Join(s.cache, "broker-"+strconv.Itoa(s.port)) }

// run runs kafka.sh with only this setup's environment (no JAVA_HOME, no
// user settings) plus extra, and returns its stdout, stderr and exit code.
func (s *setup) run(t *testing.T, arg string, extra ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(kafkaScript, arg)
	cmd.Env = append([]string{
		"PATH=" + s.bin, "HOME=" + s.home, "EDDY_KAFKA_HOME=" + s.cache,
		"EDDY_KAFKA_PORT=" + strconv.Itoa(s.port), "EDDY_KAFKA_CONTROLLER_PORT=" + strconv.Itoa(s.ctrlPort),
	}, extra...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run kafka.sh %s: %v", arg, err)
	}
	return stdout.String(), stderr.String(), code
}

// TestKafkaScriptBadSetups checks that kafka.sh start fails on each bad
// setup with exit status 1, nothing on stdout (where a caller expects the
// address), and the cause in one line on stderr, after at most the note
// that it resolves and before at most the broker log's last lines.
func TestKafkaScriptBadSetups(t *testing.T) {
	java17 := fmt.Sprintf(fakeJava, "17.0.15", brokerExits)
	tests := []struct {
		name  string
		fakes map[string]string
		env   []string
		// taken is which of the setup's ports something else listens on.
		taken string
		cause string
		// logTail is a line the broker printed, expected after the cause.
		logTail string
	}{
		{name: "no java", cause: "kafka.sh: no java on PATH; Kafka 4.4.0 needs Java 17 or newer"},
		{name: "JAVA_HOME without java", fakes: map[string]string{"java": java17}, env: []string{"JAVA_HOME=/nonexistent"},
			cause: "kafka.sh: JAVA_HOME is /nonexistent but /nonexistent/bin/java is not an executable"},
		{name: "java too old", fakes: map[string]string{"java": fmt.Sprintf(fakeJava, "11.0.20", brokerExits)},
			cause: "is Java 11.0.20; Kafka 4.4.0 needs Java 17 or newer"},
		{name: "java 8", fakes: map[string]string{"java": fmt.Sprintf(fakeJava, "1.8.0_392", brokerExits)},
			cause: "is Java 1.8.0_392; Kafka 4.4.0 needs Java 17 or newer"},
		{name: "no mvn", fakes: map[string]string{"java": java17},
			cause: "kafka.sh: no mvn on PATH; it resolves Kafka 4.4.0 from Maven Central once"},
		{name: "maven offline", fakes: map[string]string{"java": java17, "mvn": mvnIsOffline},
			cause: "kafka.sh: Maven could not resolve Kafka 4.4.0 (offline, or no access to Maven Central?): Plugin " +
				"org.apache.maven.plugins:maven-dependency-plugin:3.8.1 or one of its dependencies could not be resolved: " +
				"Cannot access central (https://repo.maven.apache.org/maven2) in offline mode -> [Help 1]; full output in "},
		// No mvn on PATH: a taken port is found before anything is resolved.
		{name: "client port taken", fakes: map[string]string{"java": java17}, taken: "client",
			cause: "is already in use by another process; pick free ports with EDDY_KAFKA_PORT"},
		{name: "controller port taken", fakes: map[string]string{"java": java17}, taken: "controller",
			cause: "is already in use by another process; pick free ports with EDDY_KAFKA_PORT"},
		{name: "broker exits", fakes: map[string]string{"java": java17, "mvn": mvnResolves},
			cause: "kafka.sh: the broker exited with status 3 while starting; see ", logTail: "  Error: the fake broker gives up"},
		{name: "broker never answers", fakes: map[string]string{"java": fmt.Sprintf(fakeJava, "17.0.15", brokerHangs), "mvn": mvnResolves},
			env:   []string{"EDDY_KAFKA_START_TIMEOUT=1"},
			cause: "within 1s (EDDY_KAFKA_START_TIMEOUT); killed it; see "},
		{name: "bad port", env: []string{"EDDY_KAFKA_PORT=90000"}, cause: "kafka.sh: EDDY_KAFKA_PORT must be 1-65534, not 90000"},
		{name: "bad timeout", env: []string{"EDDY_KAFKA_START_TIMEOUT=soon"},
			cause: "kafka.sh: EDDY_KAFKA_START_TIMEOUT must be a whole number, not 'soon'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSetup(t, tt.fakes)
			if tt.taken != "" {
				port := s.port
				if tt.taken == "controller" {
					port = s.ctrlPort
				}
				l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
				if err != nil {
					t.Fatal(err)
				}
				defer l.Close()
				tt.cause = fmt.Sprintf("kafka.sh: port 127.0.0.1:%d %s", port, tt.cause)
			}
			stdout, stderr, code := s.run(t, "start", tt.env...)
			if code != 1 || stdout != "" {
				t.Fatalf("exit status %d, stdout %q, want 1 and nothing; stderr:\n%s", code, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if strings.HasPrefix(lines[0], "kafka.sh: resolving Kafka 4.4.0 from Maven") {
				lines = lines[1:]
			}
			if !strings.HasPrefix(lines[0], "kafka.sh: ") || !strings.Contains(lines[0], tt.cause) {
				t.Fatalf("stderr's cause line is %q, want one containing %q; stderr:\n%s", lines[0], tt.cause, stderr)
			}
			if tt.logTail != "" {
				if !strings.Contains(strings.Join(lines[1:], "\n"), tt.logTail) {
					t.Fatalf("stderr lacks the log's line %q:\n%s", tt.logTail, stderr)
				}
			} else if len(lines) > 2 || (len(lines) == 2 && !strings.Contains(lines[1], "broker.log")) {
				t.Fatalf("stderr has more than the cause:\n%s", stderr)
			}
			// A failed start leaves no broker behind.
			if out, _, code := s.run(t, "status"); code != 3 {
				t.Fatalf("status after a failed start: exit %d (%q), want 3 (not running)", code, out)
			}
		})
	}
}

// TestKafkaScriptStopKillsAStuckBroker checks stop and status on a process
// that looks like our broker but neither answers nor obeys SIGTERM: status
// says it runs without answering (exit 1), stop kills it with SIGKILL once
// its bound is up and says so, and then status says not running (exit 3).
func TestKafkaScriptStopKillsAStuckBroker(t *testing.T) {
	s := newSetup(t, map[string]string{"java": fmt.Sprintf(fakeJava, "17.0.15", brokerHangs)})
	if err := os.MkdirAll(s.dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	broker := exec.Command(filepath.Join(s.bin, "java"), "-cp", "lib/*", "kafka.Kafka", filepath.Join(s.dir(), "server.properties"))
	broker.Env = []string{"PATH=" + s.bin}
	if err := broker.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- broker.Wait() }()
	waited := false
	defer func() {
		if !waited {
			broker.Process.Kill()
			<-exited
		}
	}()
	if err := os.WriteFile(filepath.Join(s.dir(), "broker.pid"), []byte(strconv.Itoa(broker.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	if out, _, code := s.run(t, "status"); code != 1 || !strings.HasPrefix(out, "running but not answering on 127.0.0.1:"+strconv.Itoa(s.port)) {
		t.Fatalf("status: exit %d, %q; want 1, running but not answering", code, out)
	}
	_, stderr, code := s.run(t, "stop", "EDDY_KAFKA_STOP_TIMEOUT=0")
	want := fmt.Sprintf("kafka.sh: the broker (pid %d) did not stop within 0s of SIGTERM (EDDY_KAFKA_STOP_TIMEOUT); killed it with SIGKILL\n", broker.Process.Pid)
	if code != 0 || stderr != want {
		t.Fatalf("stop: exit %d, stderr %q; want 0 and %q", code, stderr, want)
	}
	err := <-exited
	waited = true
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("the stuck broker ended with %v, want killed", err)
	}
	if out, _, code := s.run(t, "status"); code != 3 || out != "not running (127.0.0.1:"+strconv.Itoa(s.port)+")\n" {
		t.Fatalf("status after stop: exit %d, %q; want 3, not running", code, out)
	}
	// Stopping what does not run is not an error.
	if _, stderr, code := s.run(t, "stop"); code != 0 || !strings.Contains(stderr, "not running") {
		t.Fatalf("second stop: exit %d, stderr %q; want 0, not running", code, stderr)
	}
}

// TestKafkaScriptUsage checks that an unknown command is refused with the
// usage (exit 2).
func TestKafkaScriptUsage(t *testing.T) {
	s := newSetup(t, nil)
	if _, stderr, code := s.run(t, "begin"); code != 2 || !strings.HasPrefix(stderr, "usage: ") {
		t.Fatalf("exit %d, stderr %q; want 2 and the usage", code, stderr)
	}
}

// TestKafkaScriptBrokerAnswers checks the real broker that EDDY_TEST_KAFKA
// names (CI's real-broker pass sets it to what scripts/kafka.sh start
// printed): it creates a topic and reads its partition count back, and, if
// that broker is the script's, a second start only prints its address.
func TestKafkaScriptBrokerAnswers(t *testing.T) {
	addr := os.Getenv("EDDY_TEST_KAFKA")
	if addr == "" {
		t.Skip("EDDY_TEST_KAFKA is not set: no real broker to check (export EDDY_TEST_KAFKA=$(scripts/kafka.sh start))")
	}
	ctx := t.Context()
	topic := fmt.Sprintf("kafka-sh-test-%d", time.Now().UnixNano())
	if err := host.CreateTopics(ctx, []string{addr}, 3, topic); err != nil {
		t.Fatalf("create topic on %s: %v", addr, err)
	}
	if n, err := host.PartitionCount(ctx, []string{addr}, topic); err != nil || n != 3 {
		t.Fatalf("partitions of %s on %s: %d, %v; want 3", topic, addr, n, err)
	}

	status, err := exec.Command(kafkaScript, "status").Output()
	if err != nil || !strings.HasPrefix(string(status), "running "+addr+" ") {
		t.Logf("%s is not the broker of kafka.sh with this environment (status: %q, %v); not starting it again", addr, status, err)
		return
	}
	out, err := exec.Command(kafkaScript, "start").Output()
	if err != nil || string(out) != addr+"\n" {
		t.Fatalf("start while running: %q, %v; want %q", out, err, addr+"\n")
	}
}
