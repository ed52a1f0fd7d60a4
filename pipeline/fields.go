package pipeline

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// A fieldChecker walks the YAML tree of a pipeline file against the Go
// types it decodes into, before it is decoded, and reports in plain
// words, each with its line and field path: fields a mapping does not have
// (with the closest field it does have), keys given twice, and values of
// the wrong kind (a string where a list goes, a number where a duration
// goes, …).
//
// It takes what it reports out of the tree (a value of the wrong kind
// becomes null, a key given twice is dropped), so that the decoder, which
// would stop at the first mapping with a repeated key or leave a field it
// cannot take half done, decodes the rest of the file whole and validation
// reports every other problem too.
type fieldChecker struct {
	file string
	errs []*ValidationError
	// bad holds the field paths whose values were of the wrong kind, and
	// badIn the mappings they are fields of: validation says nothing more
	// about them (see suppressed).
	bad, badIn map[string]bool
}

var (
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
	durationType    = reflect.TypeFor[time.Duration]()
	byteSizeType    = reflect.TypeFor[ByteSize]()
	configValueType = reflect.TypeFor[ConfigValue]()
	outputType      = reflect.TypeFor[Output]()
)

func (c *fieldChecker) report(line int, field, format string, args ...any) {
	c.errs = append(c.errs, &ValidationError{File: c.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// value checks node n, the value of field path (written on line), against
// type t.
func (c *fieldChecker) value(n *yaml.Node, t reflect.Type, path string, line int) {
	for n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return
		}
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return // null decodes to the zero value of any type
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	custom := reflect.PointerTo(t).Implements(unmarshalerType)
	switch {
	case t.Kind() == reflect.Struct && n.Kind == yaml.MappingNode:
		before := len(c.errs)
		c.mapping(n, t, path)
		switch {
		case !custom:
		case len(c.errs) > before:
			// What is left of it may not be what it reads (a config
			// entry whose one key was unknown).
			c.drop(n, path)
		default:
			// A type that reads itself may refuse what its fields
			// take (a config entry with neither env nor file).
			c.decode(n, t, path, line)
		}
	case t.Kind() == reflect.Struct && custom && n.Kind == yaml.ScalarNode:
		c.decode(n, t, path, line)
	case t.Kind() == reflect.Struct:
		c.wrongKind(n, t, path, line)
	case t.Kind() == reflect.Slice && n.Kind == yaml.SequenceNode:
		for i, item := range n.Content {
			c.value(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i), item.Line)
		}
	case t.Kind() == reflect.Map && n.Kind == yaml.MappingNode:
		c.mapping(n, t, path)
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Map || n.Kind != yaml.ScalarNode:
		c.wrongKind(n, t, path, line)
	default:
		c.decode(n, t, path, line)
	}
}

// mapping checks the keys and values of mapping n against t, a struct
// (whose yaml tags name its fields) or a map, and drops the pairs it
// reports from n.
func (c *fieldChecker) mapping(n *yaml.Node, t reflect.Type, path string) {
	var names []string
	fields := map[string]reflect.Type{}
	if t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			names = append(names, name)
			fields[name] = f.Type
		}
	}
	seen := map[string]int{} // key → its line
	kept := n.Content[:0:0]
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		field := k.Value
		if path != "" {
			field = path + "." + k.Value
		}
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			if c.merge(v, t, path, k.Line) {
				kept = append(kept, k, v)
			}
			continue
		}
		if k.Kind != yaml.ScalarNode {
			c.report(k.Line, path, "a key is a name, not a list or a mapping")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			c.report(k.Line, field, "given twice (first on line %d)", first)
			continue
		}
		seen[k.Value] = k.Line
		if t.Kind() == reflect.Map {
			c.value(v, t.Elem(), field, k.Line)
			kept = append(kept, k, v)
			continue
		}
		ft, ok := fields[k.Value]
		if !ok {
			c.report(k.Line, field, "unknown field%s", suggest(k.Value, names...))
			continue
		}
		c.value(v, ft, field, k.Line)
		kept = append(kept, k, v)
	}
	n.Content = kept
}

// merge checks the value of a merge key (<<: *defaults), a mapping or a
// list of mappings whose pairs the mapping it is in takes, and reports
// whether it is one.
func (c *fieldChecker) merge(v *yaml.Node, t reflect.Type, path string, line int) bool {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		c.mapping(v, t, path)
		return true
	case yaml.SequenceNode:
		for _, m := range v.Content {
			for m.Kind == yaml.AliasNode && m.Alias != nil {
				m = m.Alias
			}
			if m.Kind != yaml.MappingNode {
				c.report(line, path, "a merge (<<) takes a mapping or a list of mappings")
				return false
			}
			c.mapping(m, t, path)
		}
		return true
	}
	c.report(line, path, "a merge (<<) takes a mapping or a list of mappings")
	return false
}

// decode decodes n into a new value of type t, as the decoder will, and
// reports what it refuses.
func (c *fieldChecker) decode(n *yaml.Node, t reflect.Type, path string, line int) {
	err := n.Decode(reflect.New(t).Interface())
	if err == nil {
		return
	}
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok {
		// The decoder names Go types ("cannot unmarshal !!str `soon`
		// into time.Duration"): say what the field takes instead.
		msg = "want " + expected(t) + ", got " + shown(n)
		if len(te.Errors) == 1 && !strings.Contains(te.Errors[0], "cannot unmarshal") {
			msg = te.Errors[0]
		}
	}
	if m := lineRE.FindStringSubmatch(strings.TrimPrefix(msg, "yaml: ")); m != nil {
		msg = m[2]
	}
	c.report(line, path, "%s", msg)
	c.drop(n, path)
}

// wrongKind reports a value that is not the kind of node t is written as.
func (c *fieldChecker) wrongKind(n *yaml.Node, t reflect.Type, path string, line int) {
	c.report(line, path, "want %s, got %s", expected(t), shown(n))
	c.drop(n, path)
}

// drop makes n null, so that the decoder leaves its field zero.
func (c *fieldChecker) drop(n *yaml.Node, path string) {
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
	if c.bad == nil {
		c.bad, c.badIn = map[string]bool{}, map[string]bool{}
	}
	c.bad[path] = true
	if i := strings.LastIndexByte(path, '.'); i > 0 && !strings.HasSuffix(path[:i], "]") {
		c.badIn[path[:i]] = true
	}
}

// suppressed reports whether a validation error about field follows from a
// value the checker dropped: its field, a field inside it, or the
// mapping it is a field of (a window whose size is not a duration has no
// size) — a list item is not, for a step has problems of its own.
func (c *fieldChecker) suppressed(field string) bool {
	if c.bad == nil {
		return false
	}
	if c.badIn[field] {
		return true
	}
	// The field or a field or list it is in.
	for f := field; ; {
		if c.bad[f] {
			return true
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			return c.bad[""]
		}
		f = f[:i]
	}
}

// expected says in words what a value of type t is written as.
func expected(t reflect.Type) string {
	switch t {
	case durationType:
		return "a duration such as 100ms, 1s or 2m"
	case byteSizeType:
		return "a size such as 64MiB, 512KiB or 1GB"
	case configValueType:
		return "a value, {env: NAME} or {file: PATH}"
	case outputType:
		return "an output's name or {name: NAME, to: TOPIC}"
	}
	switch t.Kind() {
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "a list"
	case reflect.Map:
		return "a mapping of names to values"
	case reflect.Struct:
		return "a mapping of fields (name: value)"
	case reflect.Pointer:
		return expected(t.Elem())
	}
	return "a value of another kind"
}

// maxShown bounds the bytes of a value quoted in an error.
const maxShown = 40

// shown says what node n is, for an error: a list, a mapping, or its value
// (quoted when it is a string), cut short when long.
func shown(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	v := n.Value
	if len(v) > maxShown {
		cut := maxShown
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut] + "…"
	}
	if n.ShortTag() == "!!str" {
		return strconv.Quote(v)
	}
	return v
}

// suggest returns `; did you mean "x"?`, x being the one of valid closest
// to got by edit distance, or "" when none is close enough to be the
// name got was meant to be.
func suggest(got string, valid ...string) string {
	if s, ok := closest(got, valid); ok {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// closest returns the one of valid nearest to got (the first of those
// equally near), if it is within a third of got's length of it (at least
// one edit; letter case aside).
func closest(got string, valid []string) (string, bool) {
	if got == "" || len(got) > 64 {
		return "", false
	}
	g := strings.ToLower(got)
	limit := max(1, utf8.RuneCountInString(got)/3)
	best, bestD := "", limit+1
	for _, v := range valid {
		if d := editDistance(g, strings.ToLower(v)); d < bestD && d < utf8.RuneCountInString(v) {
			best, bestD = v, d
		}
	}
	return best, best != ""
}

// editDistance is the optimal string alignment distance between a and b:
// the insertions, deletions, substitutions and transpositions of adjacent
// letters that turn one into the other.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// Three rows of the table: i-2, i-1 and i.
	prev2, prev, cur := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(x); i++ {
		cur[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(y)]
}
