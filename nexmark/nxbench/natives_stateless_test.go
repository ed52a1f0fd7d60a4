package nxbench

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestCountC compares the native q14's countC with counting in the
// unescaped string, on random strings of 'c', other letters and escapes
// (the generated extras have no \u escapes).
func TestCountC(t *testing.T) {
	parts := []string{"c", "a", "C", `\\`, `\"`, `\n`, `\u0063`, `\u00e7`, `\u006c`, `\u001c`, "ç", `\ud83d\ude00`}
	r := rand.New(rand.NewPCG(5, 6))
	for n := range 1000 {
		var raw strings.Builder
		raw.WriteByte('"')
		for range n % 40 {
			raw.WriteString(parts[r.IntN(len(parts))])
		}
		raw.WriteByte('"')
		var s string
		if err := json.Unmarshal([]byte(raw.String()), &s); err != nil {
			t.Fatal(err)
		}
		if got, err := countC([]byte(raw.String())); err != nil || got != strings.Count(s, "c") {
			t.Fatalf("countC(%s) = %d, %v; want %d", raw.String(), got, err, strings.Count(s, "c"))
		}
	}
}

// TestChannelID compares the native q21's channelID with the regular
// expression, on random URLs of the pieces that matter.
func TestChannelID(t *testing.T) {
	re := regexp.MustCompile(`(&|^)channel_id=([^&]*)`)
	parts := []string{"channel_id=", "&", "x", "1", "?", "=", "channel_i", "\n"}
	r := rand.New(rand.NewPCG(7, 8))
	for n := range 5000 {
		var url strings.Builder
		for range n % 12 {
			url.WriteString(parts[r.IntN(len(parts))])
		}
		got, ok := channelID([]byte(url.String()))
		m := re.FindStringSubmatch(url.String())
		if ok != (m != nil) || ok && string(got) != m[2] {
			t.Fatalf("channelID(%q) = %q, %v; the expression finds %q", url.String(), got, ok, m)
		}
	}
}
