// Package netns provides network namespaces joined by a bridge, so that a
// test can run processes on one machine as the hosts of a real network:
// each host has its own network stack and address, and its link can be
// taken down and brought back while its processes keep running.
//
// A Network is built with iproute2 (`ip netns`, veth pairs, a bridge), as
// root:
//
//	net := netns.New(t, "broker", "n1", "n2")
//	cmd := net.Host("broker").Command("eddy", "broker", "--host", net.Host("broker").Addr)
//	net.Host("n2").SetLink(t, false) // n2 is cut off; its processes run on
//
// Each host is a namespace named eddy-PID-N-NAME (N counts the networks of
// the process) with one interface, eth0,
// whose peer is attached to a bridge in the root namespace; the bridge
// holds the first address of a private /24 (10.231.X.0/24, X the first
// value not in use on this machine), so the test process itself reaches
// every host. New removes everything when the test ends, failed or not,
// and first removes what runs of this package in processes that no longer
// exist left behind (a test binary killed before its cleanup).
//
// # Why processes run under `ip netns exec`
//
// Go cannot start a child in another network namespace by itself
// (syscall.SysProcAttr has no setns). `ip netns exec NS CMD` enters the
// namespace and then execs CMD in place (iproute2 forks only in batch
// mode), so the exec.Cmd's process is the command itself: signals reach
// it, and killing it kills the command.
package netns

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// SkipEnv is the environment variable that lets a machine without
// namespaces skip the tests that need them: EDDY_SKIP_NETNS=1. Without it
// such a test fails, saying what is missing.
const SkipEnv = "EDDY_SKIP_NETNS"

// namePrefix begins the name of every namespace this package creates, and
// linkPrefix/bridgePrefix those of its interfaces; the creating process's
// id follows, so that leftovers of dead processes can be told apart from
// the namespaces of runs still going.
const (
	namePrefix   = "eddy-"
	linkPrefix   = "ev"  // ev<pid>-<k>: a host's link, root side (at most 15 bytes)
	bridgePrefix = "ebr" // ebr<pid>-<n>
)

// networks and links count the networks and links of this process, so
// that names stay unique when a test makes several.
var networks, links atomic.Int32

// Network is a bridge and the hosts attached to it.
type Network struct {
	t      testing.TB // the test the network belongs to
	bridge string
	hosts  []*Host
	// Gateway is the root namespace's address on the bridge: how the test
	// process is seen by the hosts.
	Gateway netip.Addr
}

// Host is one network namespace with one link to the bridge.
type Host struct {
	// Name is the name the test gave the host.
	Name string
	// NS is the namespace's name (for `ip netns exec`).
	NS string
	// Addr is the host's address on the network.
	Addr string
	// link is the root-side end of the host's veth pair.
	link string
}

// Check reports what keeps this machine from creating namespaces: not
// root, or no `ip` command.
func Check() error {
	if _, err := exec.LookPath("ip"); err != nil {
		return fmt.Errorf("no ip command (%w): install iproute2 (apt-get install -y iproute2; scripts/install-toolchains.sh does)", err)
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("network namespaces need root (running as uid %d)", os.Geteuid())
	}
	return nil
}

// New creates a network with one host per name, torn down when the test
// ends. Where namespaces cannot be created it fails the test, saying what
// to install, unless EDDY_SKIP_NETNS=1, which skips it.
func New(t testing.TB, names ...string) *Network {
	t.Helper()
	if err := Check(); err != nil {
		if os.Getenv(SkipEnv) == "1" {
			t.Skipf("%s=1: skipping a test that needs network namespaces (%v)", SkipEnv, err)
		}
		t.Fatalf("%v; or set %s=1 to skip the tests that need network namespaces", err, SkipEnv)
	}
	if len(names) > 250 {
		t.Fatalf("netns: %d hosts, at most 250", len(names))
	}
	removeLeftovers(t)
	pid := os.Getpid()
	x, err := freeSubnet()
	if err != nil {
		t.Fatal(err)
	}
	seq := strconv.Itoa(int(networks.Add(1)))
	n := &Network{t: t, bridge: bridgePrefix + strconv.Itoa(pid) + "-" + seq, Gateway: netip.AddrFrom4([4]byte{10, 231, x, 1})}
	t.Cleanup(func() { n.remove(t) })
	run(t, "ip", "link", "add", n.bridge, "type", "bridge")
	run(t, "ip", "addr", "add", n.Gateway.String()+"/24", "dev", n.bridge)
	run(t, "ip", "link", "set", n.bridge, "up")
	for i, name := range names {
		h := &Host{
			Name: name,
			NS:   namePrefix + strconv.Itoa(pid) + "-" + seq + "-" + name,
			Addr: netip.AddrFrom4([4]byte{10, 231, x, byte(2 + i)}).String(),
			link: linkPrefix + strconv.Itoa(pid) + "-" + strconv.Itoa(int(links.Add(1))),
		}
		n.hosts = append(n.hosts, h)
		run(t, "ip", "netns", "add", h.NS)
		run(t, "ip", "-n", h.NS, "link", "set", "lo", "up")
		run(t, "ip", "link", "add", h.link, "type", "veth", "peer", "name", "eth0", "netns", h.NS)
		run(t, "ip", "link", "set", h.link, "master", n.bridge, "up")
		run(t, "ip", "-n", h.NS, "addr", "add", h.Addr+"/24", "dev", "eth0")
		run(t, "ip", "-n", h.NS, "link", "set", "eth0", "up")
	}
	return n
}

// Host returns the host of that name; a name New was not given fails the
// test (a mistake in it).
func (n *Network) Host(name string) *Host {
	for _, h := range n.hosts {
		if h.Name == name {
			return h
		}
	}
	n.t.Helper()
	n.t.Fatalf("netns: no host %q (the network has %d)", name, len(n.hosts))
	return nil
}

// Command is exec.Command for a process on the host: it runs name with
// args in the host's namespace (`ip netns exec`, which execs in place).
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// SetLink takes the host's link down (up false) or brings it back. Down,
// the host's packets go nowhere and nothing reaches it, as with a cable
// pulled: its processes and their sockets live on, and TCP retransmits
// until the link is back or its timeouts give up.
func (h *Host) SetLink(t testing.TB, up bool) {
	t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	run(t, "ip", "link", "set", h.link, state)
}

// remove kills what still runs in the hosts and deletes them and the
// bridge, reporting (not failing on) what it could not delete.
func (n *Network) remove(t testing.TB) {
	for _, h := range n.hosts {
		removeNS(t, h.NS)
		removeLink(t, h.link)
	}
	removeLink(t, n.bridge)
}

// removeNS kills the processes left in namespace ns (all started by the
// test that made it) and deletes it.
func removeNS(t testing.TB, ns string) {
	if out, err := exec.Command("ip", "netns", "pids", ns).Output(); err == nil {
		for _, f := range strings.Fields(string(out)) {
			if pid, err := strconv.Atoi(f); err == nil {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
	if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("No such file")) {
		t.Logf("netns: ip netns del %s: %v: %s", ns, err, bytes.TrimSpace(out))
	}
}

// removeLink deletes a link of the root namespace. A veth whose namespace
// was deleted goes with it, but only once the kernel has cleaned the
// namespace up, which it does asynchronously: it is deleted here at once.
func removeLink(t testing.TB, link string) {
	out, err := exec.Command("ip", "link", "del", link).CombinedOutput()
	if err != nil && !bytes.Contains(out, []byte("Cannot find device")) {
		t.Logf("netns: ip link del %s: %v: %s", link, err, bytes.TrimSpace(out))
	}
}

var (
	leftoverNS   = regexp.MustCompile(`^` + namePrefix + `([0-9]+)-[0-9]+-[A-Za-z0-9_.-]+$`)
	leftoverLink = regexp.MustCompile(`^(?:` + linkPrefix + `|` + bridgePrefix + `)([0-9]+)-[0-9]+$`)
)

// removeLeftovers deletes the namespaces and links this package created in
// processes that have ended without their cleanup.
func removeLeftovers(t testing.TB) {
	gone := func(pid string) bool {
		p, err := strconv.Atoi(pid)
		return err == nil && p != os.Getpid() && syscall.Kill(p, 0) == syscall.ESRCH
	}
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			if m := leftoverNS.FindStringSubmatch(f[0]); m != nil && gone(m[1]) {
				t.Logf("netns: removing %s, left by process %s", f[0], m[1])
				removeNS(t, f[0])
			}
		}
	}
	if out, err := exec.Command("ip", "-o", "link", "show").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			// "12: ev123-0@if2: <...>"
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			if m := leftoverLink.FindStringSubmatch(name); m != nil && gone(m[1]) {
				t.Logf("netns: removing link %s, left by process %s", name, m[1])
				removeLink(t, name)
			}
		}
	}
}

// freeSubnet returns the first X for which 10.231.X.0/24 has no address on
// this machine's root namespace.
func freeSubnet() (byte, error) {
	out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return 0, fmt.Errorf("netns: ip addr show: %w", err)
	}
	for x := 1; x < 255; x++ {
		if !bytes.Contains(out, []byte(" 10.231."+strconv.Itoa(x)+".")) {
			return byte(x), nil
		}
	}
	return 0, fmt.Errorf("netns: every 10.231.X.0/24 is in use")
}

// run runs an ip command, failing the test with its output if it fails.
func run(t testing.TB, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("netns: %s %s: %v: %s", name, strings.Join(args, " "), err, bytes.TrimSpace(out))
	}
}
