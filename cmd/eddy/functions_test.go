package main

import (
	"strings"
	"testing"
)

// TestAdminCommands drives a step through deploy, shadow, promote,
// rollbacks and discard with the CLI against an admin API over an
// admin.MemoryBackend, checking every command's output.
func TestAdminCommands(t *testing.T) {
	_, url := startAdmin(t)
	f := writeFiles(t, map[string]string{
		"v1.wasm":  wasmHeader + "1.0",
		"v2.wasm":  wasmHeader + "2.0",
		"v3.wasm":  wasmHeader + "3.0",
		"v4.wasm":  wasmHeader + "4.0",
		"in.jsonl": "{\"value\":\"a\"}\n{\"value\":\"b\"}\n",
		"token":    adminToken + "\n",
	})
	step := []string{"--pipeline", "orders", "--step", "enrich", "--admin", url}
	withToken := append([]string{"--token-file", f["token"]}, step...)
	steps := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"deploy", nil, append([]string{"deploy", f["v1.wasm"], "--note", "first"}, withToken...),
			"deploy orders/enrich: version 1, module f8088f7f85f2 (enricher 1.0)\n"},
		{"shadow deploy, token and address from the environment", map[string]string{"EDDY_ADMIN_TOKEN": adminToken, "EDDY_ADMIN": url},
			[]string{"deploy", f["v2.wasm"], "--shadow", "-p", "orders", "-s", "enrich"},
			"shadow orders/enrich: version 2, module 6f0a17ae13f7 (enricher 2.0)\n"},
		{"ls", nil, []string{"functions", "ls", "--admin", url}, `
PIPELINE  STEP    LIVE  DIGEST        FUNCTION      SHADOW
orders    enrich  1     f8088f7f85f2  enricher@1.0  2:6f0a17ae13f7
orders    score   0     -             -             -
`},
		{"promote, token from the flag", nil, append([]string{"promote", "--token", adminToken, "--note", "shadow matches"}, step...),
			"promote orders/enrich: version 3, module 6f0a17ae13f7 (enricher 2.0)\n"},
		{"deploy with a smoke test", nil, append([]string{"deploy", f["v3.wasm"], "--sample", f["in.jsonl"], "--expect", f["in.jsonl"]}, withToken...),
			"deploy orders/enrich: version 4, module b06e74fbd6cc (enricher 3.0)\n"},
		{"rollback to the previous live", nil, append([]string{"functions", "rollback", "--note", "3.0 drops records"}, withToken...),
			"rollback orders/enrich: version 5, module 6f0a17ae13f7 (enricher 2.0), back to version 3\n"},
		{"rollback to a version", nil, append([]string{"functions", "rollback", "--version", "1"}, withToken...),
			"rollback orders/enrich: version 6, module f8088f7f85f2 (enricher 1.0), back to version 1\n"},
		{"shadow again", nil, append([]string{"deploy", f["v4.wasm"], "--shadow"}, withToken...),
			"shadow orders/enrich: version 7, module 7ac850090e9c (enricher 4.0)\n"},
		{"discard", nil, append([]string{"discard"}, withToken...),
			"discard orders/enrich: version 8, module 7ac850090e9c (enricher 4.0)\n"},
		{"history", nil, append([]string{"functions", "history"}, step...), `
VERSION  ACTION    DIGEST        TARGET  TIME                  NODE    NOTE
1        deploy    f8088f7f85f2  -       2025-01-02T03:04:01Z  node-1  first
2        shadow    6f0a17ae13f7  -       2025-01-02T03:04:02Z  node-1  -
3        promote   6f0a17ae13f7  -       2025-01-02T03:04:03Z  node-1  shadow matches
4        deploy    b06e74fbd6cc  -       2025-01-02T03:04:04Z  node-1  -
5        rollback  6f0a17ae13f7  3       2025-01-02T03:04:05Z  node-1  3.0 drops records
6        rollback  f8088f7f85f2  1       2025-01-02T03:04:06Z  node-1  -
7        shadow    7ac850090e9c  -       2025-01-02T03:04:07Z  node-1  -
8        discard   7ac850090e9c  -       2025-01-02T03:04:08Z  node-1  -
`},
		{"ls of one pipeline", nil, []string{"functions", "ls", "-p", "orders", "--admin", url}, `
PIPELINE  STEP    LIVE  DIGEST        FUNCTION      SHADOW
orders    enrich  6     f8088f7f85f2  enricher@1.0  -
orders    score   0     -             -             -
`},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) {
			for k, v := range s.env {
				t.Setenv(k, v)
			}
			stdout, stderr, code := run(t, "", s.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := strings.TrimPrefix(s.want, "\n"); stdout != want {
				t.Fatalf("stdout:\n%s\nwant:\n%s", stdout, want)
			}
		})
	}
}

func TestAdminCommandRefusals(t *testing.T) {
	_, url := startAdmin(t)
	step := []string{"--pipeline", "orders", "--step", "score", "--admin", url, "--token", adminToken}
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"nothing to roll back to", append([]string{"functions", "rollback"}, step...), "eddy: rollback refused: conflict: orders/score: no earlier version to roll back to"},
		{"no version to roll back to", append([]string{"functions", "rollback", "--version", "3"}, step...), "eddy: rollback refused: conflict:"},
		{"negative version", append([]string{"functions", "rollback", "--version", "-1"}, step...), "--version -1: want a version"},
		{"no shadow to promote", append([]string{"promote"}, step...), "eddy: promote refused: conflict: orders/score: no shadow deploy"},
		{"no shadow to discard", append([]string{"discard"}, step...), "eddy: discard refused: conflict:"},
		{"history of an unknown step", []string{"functions", "history", "-p", "orders", "-s", "nope", "--admin", url}, "eddy: functions history: not_found: no step orders/nope"},
		{"ls of an unknown pipeline", []string{"functions", "ls", "-p", "nope", "--admin", url}, `eddy: functions ls: not_found: no pipeline "nope"`},
		{"promote without a token", []string{"promote", "-p", "orders", "-s", "score", "--admin", url}, "eddy: promote refused: unauthorized: missing token"},
		{"history without a step", []string{"functions", "history", "-p", "orders", "--admin", url}, `required flag(s) "step" not set`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", tc.args...)
			if code != 1 || stdout != "" || !strings.Contains(stderr, tc.stderr) {
				t.Fatalf("exit %d, stdout %q, stderr:\n%s\nwant it to say %q", code, stdout, stderr, tc.stderr)
			}
		})
	}
}

func TestAdminCommandsHelp(t *testing.T) {
	for _, cmd := range [][]string{{"deploy"}, {"functions"}, {"functions", "ls"}, {"functions", "history"}, {"functions", "rollback"}, {"promote"}, {"discard"}, {"status"}} {
		stdout, _, code := run(t, "", append(cmd, "--help")...)
		if code != 0 || !strings.Contains(stdout, "Examples:") {
			t.Errorf("%s --help: exit %d, no example:\n%s", cmd, code, stdout)
		}
	}
}

// TestShadowActionsHaveTheirOwnWords: promote and discard share their
// code, not their words: each --help says what its --note records, with an
// example note of its own.
func TestShadowActionsHaveTheirOwnWords(t *testing.T) {
	noteLine := func(help string) string {
		for _, line := range strings.Split(help, "\n") {
			if strings.Contains(line, "--note string") {
				return strings.TrimSpace(line)
			}
		}
		return ""
	}
	promote, _, _ := run(t, "", "promote", "--help")
	discard, _, _ := run(t, "", "discard", "--help")
	pn, dn := noteLine(promote), noteLine(discard)
	if pn == "" || dn == "" || pn == dn || !strings.Contains(pn, "goes live") || !strings.Contains(dn, "dropped") {
		t.Fatalf("--note of promote: %q\n--note of discard: %q", pn, dn)
	}
	if strings.Contains(discard, "shadow output matches") {
		t.Fatalf("discard --help gives promote's example note:\n%s", discard)
	}
}
