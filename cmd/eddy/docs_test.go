package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// docCommand is an eddy command line of the documentation: where it is and
// its words.
type docCommand struct {
	where string // file:line, or the command whose --help shows it
	args  []string
}

// TestDocCommands checks every eddy command of README.md, docs/*.md,
// abi/ABI.md and each command's --help examples: the command exists, its
// flags parse, and every file of the repository it names (testdata/…,
// examples/…) exists; those that run here in a moment with no broker
// (eddy test, inspect, conformance, version) are run and must
// succeed. The examples' commands are run whole by TestExamples.
func TestDocCommands(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	files = append(files, filepath.Join("..", "..", "README.md"), filepath.Join("..", "..", "abi", "ABI.md"))
	var cmds []docCommand
	for _, f := range files {
		cmds = append(cmds, readDocCommands(t, f)...)
	}
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, l := range strings.Split(c.Example, "\n") {
			if words := shellWords(strings.TrimSpace(l)); len(words) > 0 && words[0] == "eddy" {
				cmds = append(cmds, docCommand{where: c.CommandPath() + " --help", args: words[1:]})
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	if len(cmds) < 50 {
		t.Fatalf("found %d commands in the docs; the reader is broken", len(cmds))
	}
	ran := 0
	for _, dc := range cmds {
		c, rest, err := newRootCmd(strings.NewReader(""), io.Discard, io.Discard).Find(dc.args)
		if err != nil || c.Name() == "eddy" && len(dc.args) > 0 {
			t.Errorf("%s: eddy %s: no such command (%v)", dc.where, strings.Join(dc.args, " "), err)
			continue
		}
		if err := c.ParseFlags(rest); err != nil {
			t.Errorf("%s: eddy %s: %v", dc.where, strings.Join(dc.args, " "), err)
			continue
		}
		for _, a := range c.Flags().Args() {
			checkDocPath(t, dc, a)
		}
		if runsHere(c.Name(), dc.args) {
			args := make([]string, len(dc.args))
			for i, a := range dc.args {
				args[i] = repoPath(a)
			}
			stdout, stderr, code := run(t, "", args...)
			if code != 0 {
				t.Errorf("%s: eddy %s: exit %d\n%s%s", dc.where, strings.Join(dc.args, " "), code, stdout, stderr)
			}
			ran++
		}
	}
	t.Logf("%d documented commands checked, %d of them run", len(cmds), ran)
}

// runsHere says whether a documented command runs here quickly without a
// broker, a node or files it makes up.
func runsHere(name string, args []string) bool {
	switch name {
	case "version":
		return true
	case "test", "inspect", "conformance":
		for _, a := range args {
			if strings.HasSuffix(a, ".wasm") && !strings.HasPrefix(a, "testdata/") {
				return false // a placeholder (FN.wasm) or the reader's own module
			}
		}
		return true
	}
	return false
}

// checkDocPath fails when a of dc names a file of the repository that does
// not exist.
func checkDocPath(t *testing.T, dc docCommand, a string) {
	t.Helper()
	if !strings.HasPrefix(a, "testdata/") && !strings.HasPrefix(a, "examples/") {
		return
	}
	if _, err := os.Stat(repoPath(a)); err != nil {
		t.Errorf("%s: eddy %s: %s does not exist", dc.where, strings.Join(dc.args, " "), a)
	}
}

// repoPath is a, a path from the repository root, from this package's
// directory.
func repoPath(a string) string {
	if strings.HasPrefix(a, "testdata/") || strings.HasPrefix(a, "examples/") {
		return filepath.Join("..", "..", a)
	}
	return a
}

// readDocCommands reads the eddy commands of the shell blocks of a
// Markdown file (lines continued with a backslash joined; a trailing
// comment and & dropped).
func readDocCommands(t *testing.T, path string) []docCommand {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []docCommand
	sc := bufio.NewScanner(f)
	inShell, n := false, 0
	var pending string
	start := 0
	for sc.Scan() {
		n++
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			lang := strings.TrimPrefix(trimmed, "```")
			inShell = !inShell && (lang == "sh" || lang == "bash" || lang == "shell" || lang == "console")
			continue
		}
		if !inShell {
			continue
		}
		trimmed = strings.TrimPrefix(trimmed, "$ ")
		if pending == "" {
			start = n
		}
		if strings.HasSuffix(trimmed, "\\") {
			pending += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		line := pending + trimmed
		pending = ""
		words := shellWords(line)
		if len(words) > 0 && words[0] == "eddy" {
			out = append(out, docCommand{where: filepath.Base(path) + ":" + strconv.Itoa(start), args: words[1:]})
		}
	}
	return out
}

// shellWords splits a shell command line into words: quotes group, a #
// outside quotes starts a comment, a trailing & and anything after a pipe
// or ; are dropped.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			} else {
				cur.WriteByte(ch)
			}
		case ch == '\'' || ch == '"':
			quote, inWord = ch, true
		case ch == '#' && !inWord:
			i = len(line)
		case ch == '|' || ch == ';' || ch == '&' || ch == '>' || ch == '<':
			i = len(line)
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// TestQuickstartInstallsFirst: the README's quickstart gives a new user an
// eddy command (go install) before it uses one, and says the first build
// is slow and silent.
func TestQuickstartInstallsFirst(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	start := strings.Index(s, "## Quickstart")
	end := strings.Index(s[start+1:], "\n## ")
	if start < 0 || end < 0 {
		t.Fatal("README.md has no Quickstart section")
	}
	q := s[start : start+1+end]
	install, use := strings.Index(q, "go install ./cmd/eddy"), strings.Index(q, "\neddy ")
	if install < 0 || use < 0 || install > use {
		t.Fatalf("the quickstart must install eddy (go install ./cmd/eddy) before its first eddy command:\n%s", q)
	}
	if !strings.Contains(q, "first build") {
		t.Errorf("the quickstart does not say how long the first build takes:\n%s", q)
	}
}
