package pipeline

import (
	"bytes"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzParsePipeline: no file makes the parser panic or run away (the file
// and its alias expansion are bounded before decoding), and every accepted
// pipeline, written back as YAML, parses to a pipeline written the same.
func FuzzParsePipeline(f *testing.F) {
	f.Add([]byte(goodPipeline))
	f.Add([]byte(keyedPipeline))
	f.Add([]byte(goodPipeline + "  queue_size: 1e14\n"))
	f.Add([]byte(strings.Replace(goodPipeline, "64MiB", "17179869184GiB", 1)))
	f.Add([]byte(goodPipeline + "  overload: sample\n  sample_rate: .nan\n"))
	f.Add([]byte("a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nsteps: *c\n"))
	f.Add([]byte("name: &a [*a]\n"))
	f.Add([]byte(strings.Replace(goodPipeline, "    kind: map\n", "    kind: aggregate\n    window: {type: hopping, size: 1h, advance: 1s, grace: 5s}\n", 1)))
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := ParsePipeline("p.yaml", src)
		if err != nil {
			if p != nil {
				t.Fatal("a pipeline with an error")
			}
			return
		}
		out, err := yaml.Marshal(p)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		q, err := ParsePipeline("p.yaml", out)
		if err != nil {
			t.Fatalf("accepted pipeline written back is refused: %v\n%s", err, out)
		}
		// Compared as written: an empty list and an absent one are the
		// same pipeline.
		again, err := yaml.Marshal(q)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("round trip changed the pipeline:\n%s\n%s", out, again)
		}
	})
}

// FuzzParseByteSize: no size string panics; an accepted size is not
// negative and reads back from its String.
func FuzzParseByteSize(f *testing.F) {
	for _, s := range []string{"64MiB", "0", "1 KB", "17179869184GiB", "99999999999999999999", "9223372036854775807", "8G", " 12k "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseByteSize(s)
		if err != nil {
			return
		}
		if v < 0 {
			t.Fatalf("ParseByteSize(%q) = %d", s, v)
		}
		w, err := ParseByteSize(v.String())
		if err != nil || w != v {
			t.Fatalf("ParseByteSize(%q) = %d, its String %q reads back as %d, %v", s, v, v.String(), w, err)
		}
	})
}
