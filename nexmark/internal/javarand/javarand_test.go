package javarand

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const vectorsFile = "../../../testdata/nexmark/random_vectors.txt"

func price(r *Random) int64 {
	return Round(math.Pow(10.0, r.Float64()*6.0) * 100.0)
}

// TestVectors replays every call of the golden file, printed by the real
// JDK, on the port.
func TestVectors(t *testing.T) {
	data, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	rs := map[int64]*Random{}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		lines++
		f := strings.Fields(sc.Text())
		if len(f) != 4 {
			t.Fatalf("line %d: want 4 fields: %q", lines, sc.Text())
		}
		seed, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			t.Fatalf("line %d: %v", lines, err)
		}
		r := rs[seed]
		if r == nil {
			nr := New(seed)
			r = &nr
			rs[seed] = r
		}
		op, arg, want := f[1], f[2], f[3]
		var got string
		switch op {
		case "int":
			got = strconv.FormatInt(int64(r.Int32()), 10)
		case "intn":
			n, err := strconv.ParseInt(arg, 10, 32)
			if err != nil {
				t.Fatalf("line %d: %v", lines, err)
			}
			got = strconv.FormatInt(int64(r.Int32n(int32(n))), 10)
		case "long":
			got = strconv.FormatInt(r.Int64(), 10)
		case "double":
			got = strconv.FormatUint(math.Float64bits(r.Float64()), 16)
		case "bool":
			got = strconv.FormatBool(r.Bool())
		case "price":
			got = strconv.FormatInt(price(r), 10)
		case "round":
			bits, err := strconv.ParseUint(arg, 16, 64)
			if err != nil {
				t.Fatalf("line %d: %v", lines, err)
			}
			got = strconv.FormatInt(Round(math.Float64frombits(bits)), 10)
		case "prices":
			from, to, ok := strings.Cut(arg, ":")
			if !ok {
				t.Fatalf("line %d: bad range %q", lines, arg)
			}
			lo, err1 := strconv.ParseInt(from, 10, 64)
			hi, err2 := strconv.ParseInt(to, 10, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("line %d: bad range %q", lines, arg)
			}
			var sum int64
			for s := lo; s < hi; s++ {
				r := New(s)
				sum = sum*31 + price(&r)
			}
			got = strconv.FormatInt(sum, 10)
		default:
			t.Fatalf("line %d: unknown op %q", lines, op)
		}
		if got != want {
			t.Fatalf("line %d: %s: got %s, want %s (the JDK's)", lines, sc.Text(), got, want)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if lines < 1000 {
		t.Fatalf("only %d vectors in %s", lines, vectorsFile)
	}
}

// TestVectorsFromJDK regenerates the golden file with the JDK on this
// machine and checks that it is unchanged, so the golden file is known to
// come from a real JDK.
func TestVectorsFromJDK(t *testing.T) {
	javaBin, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java is not on PATH: the JDK cross-check is skipped (TestVectors still compares against the committed JDK output)")
	}
	if testing.Short() {
		t.Skip("starting a JVM is slow: skipped in -short mode")
	}
	src, err := filepath.Abs("../../../testdata/nexmark/RandomVectors.java")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(javaBin, src)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("java %s: %v\n%s", src, err, stderr.String())
	}
	want, err := os.ReadFile(vectorsFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, want) {
		t.Fatalf("the JDK's output differs from %s: regenerate it with\n\tjava testdata/nexmark/RandomVectors.java > testdata/nexmark/random_vectors.txt", vectorsFile)
	}
}

func TestInt32nPanics(t *testing.T) {
	for _, bound := range []int32{0, -1, math.MinInt32} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Int32n(%d) did not panic", bound)
				}
			}()
			r := New(1)
			r.Int32n(bound)
		}()
	}
}

func BenchmarkInt32n(b *testing.B) {
	r := New(42)
	var sink int32
	for b.Loop() {
		sink += r.Int32n(26)
	}
	_ = sink
}
