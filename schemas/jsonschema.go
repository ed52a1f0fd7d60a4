package schemas

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// jsonSchema is a compiled JSON Schema. The compiler loads nothing from
// outside: only the schema, the schemas it references through the
// registry, and the standard meta-schemas (a schema from a registry must
// not make the node read its files or the network).
type jsonSchema struct {
	schema *jsonschema.Schema
}

// jsonBase is the base URL registry schemas are compiled under; a
// reference named other.json is jsonBase's sibling.
const jsonBase = "https://schemas.eddy.invalid/"

func parseJSONSchema(text string, refs map[string]string) (*jsonSchema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	add := func(name, text string) error {
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return c.AddResource(jsonBase+name, doc)
	}
	for name, t := range refs {
		if err := add(name, t); err != nil {
			return nil, fmt.Errorf("a referenced schema: %w", err)
		}
	}
	if err := add("schema.json", text); err != nil {
		return nil, err
	}
	s, err := c.Compile(jsonBase + "schema.json")
	if err != nil {
		return nil, err
	}
	return &jsonSchema{schema: s}, nil
}

// validate checks doc, JSON text, against the schema and returns it as a
// plain value.
func (s *jsonSchema) validate(doc []byte) (any, error) {
	if !json.Valid(doc) || !utf8.Valid(doc) {
		return nil, errors.New("not JSON (in UTF-8)")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w", err)
	}
	if err := s.schema.Validate(v); err != nil {
		return nil, fmt.Errorf("%w: %s", errNotFit, oneLine(err.Error()))
	}
	return v, nil
}

// oneLine joins a multi-line validation report into one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
