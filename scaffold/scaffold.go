// Package scaffold writes new function projects (`eddy new`): a source file,
// a build script, a README and a copy of the language's SDK, so that the
// project builds with nothing but the language's toolchain.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"
)

//go:embed all:templates
var templates embed.FS

// SDKs holds each language's SDK files, keyed by language; set by the caller
// (package sdk embeds them; the Go SDK comes from a snapshot, see GoSDK).
type SDKs map[string]fs.FS

// Languages returns the languages with a template, sorted.
func Languages() []string {
	entries, _ := templates.ReadDir("templates")
	var langs []string
	for _, e := range entries {
		if e.IsDir() {
			langs = append(langs, e.Name())
		}
	}
	sort.Strings(langs)
	return langs
}

// sampleRecords is the sample input every new project gets, for eddy test.
const sampleRecords = `{"key": "a", "value": "hello eddy", "timestamp": 1700000000000}
{"key": "b", "value": {"json": "values work too"}, "timestamp": 1700000001000}
`

var validName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// ErrExists is returned when the target directory already exists.
var ErrExists = errors.New("already exists")

// New writes a project for lang named name into dir (which must not exist):
// the language's template, rendered, and its SDK under dir/eddy-sdk. Template
// files named *.tmpl lose the suffix; *.sh files are made executable.
func New(dir, lang, name string, sdks SDKs) ([]string, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("name %q: use lower-case letters, digits and _, starting with a letter (it becomes a module, crate or file name)", name)
	}
	root := "templates/" + lang
	if _, err := fs.Stat(templates, root); err != nil {
		return nil, fmt.Errorf("language %q: not one of %s", lang, strings.Join(Languages(), ", "))
	}
	sdk, ok := sdks[lang]
	if !ok {
		return nil, fmt.Errorf("language %q: no SDK available", lang)
	}
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("%s: %w", dir, ErrExists)
	}
	var written []string
	data := struct{ Name string }{name}
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		src, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		var out bytes.Buffer
		if err := t.Execute(&out, data); err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
		written = append(written, rel)
		return write(filepath.Join(dir, filepath.FromSlash(rel)), out.Bytes())
	})
	if err != nil {
		return written, err
	}
	if !slices.Contains(written, "sample.jsonl") {
		written = append(written, "sample.jsonl")
		if err := write(filepath.Join(dir, "sample.jsonl"), []byte(sampleRecords)); err != nil {
			return written, err
		}
	}
	err = fs.WalkDir(sdk, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sdk, p)
		if err != nil {
			return err
		}
		rel := path.Join("eddy-sdk", p)
		written = append(written, rel)
		return write(filepath.Join(dir, filepath.FromSlash(rel)), b)
	})
	return written, err
}

func write(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if strings.HasSuffix(file, ".sh") {
		mode = 0o755
	}
	return os.WriteFile(file, b, mode)
}
