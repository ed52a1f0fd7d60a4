package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/schemas"
)

// registryFlags are the flags of produce and consume for values in a
// schema registry format (--format avro, protobuf or json_schema).
type registryFlags struct {
	url     string // --registry
	subject string // --subject (produce; default <topic>-value)
	schema  string // --schema: a file registered under the subject first (produce)
	message string // --message: the Protobuf message type (produce)
}

// registryHelp is the commands' help about the registry formats.
const registryHelp = `--format avro, protobuf or json_schema: the values are in a schema
registry's wire format (a zero byte, the schema id, for Protobuf the message
indexes, then the value). eddy produce encodes each line's JSON value with
the latest schema of --subject (default <topic>-value; --schema registers a
file there first); eddy consume decodes each value with the schema its id
names and shows it as JSON (a value that does not decode is shown as it is,
with an eddy.decode.error header). --registry is the registry's URL (default:
--pipeline's, else http://127.0.0.1:8081, where eddy dev and eddy broker
--schema-registry serve one).`

const defaultRegistry = "http://127.0.0.1:8081"

// registry opens the registry the flags name, or p's (for topic: the
// sink's when it is p's sink topic, else the source's).
func (f *registryFlags) registry(p *pipeline.Pipeline, topic string) (*schemas.Registry, error) {
	url := f.url
	if url == "" && p != nil {
		url = p.Source.Registry
		if topic == p.Sink.Topic && p.Sink.Registry != "" {
			url = p.Sink.Registry
		}
	}
	if url == "" {
		url = defaultRegistry
	}
	return schemas.NewRegistry(url, schemas.Options{})
}

// registryEncoder returns what turns a JSON value into format's wire
// format with the schema of the flags' subject (for topic).
func (f *registryFlags) encoder(ctx context.Context, reg *schemas.Registry, format, topic string) (*schemas.Encoder, error) {
	subject := f.subject
	if subject == "" {
		subject = topic + "-value"
	}
	var s *schemas.Schema
	var err error
	if f.schema != "" {
		text, rerr := os.ReadFile(f.schema)
		if rerr != nil {
			return nil, fmt.Errorf("--schema: %w", rerr)
		}
		s, err = reg.Register(ctx, subject, schemas.Format(format), string(text))
	} else {
		s, err = reg.Latest(ctx, subject)
		if errors.Is(err, schemas.ErrUnknownSchema) {
			err = fmt.Errorf("subject %q has no schema in %s (register one, or give --schema FILE): %w", subject, reg.URL(), err)
		}
	}
	if err != nil {
		return nil, err
	}
	if s.Format != schemas.Format(format) {
		return nil, fmt.Errorf("subject %q's schema (id %d) is %s, not %s", subject, s.ID, s.Format, format)
	}
	return schemas.NewEncoder(s, schemas.JSON, f.message)
}

// encodeRecords wraps read (JSON-lines records) to encode each value with
// enc; a value that does not fit stops with its line's number.
func encodeRecords(read func() (abi.Record, error), enc *schemas.Encoder) func() (abi.Record, error) {
	line := 0
	return func() (abi.Record, error) {
		r, err := read()
		if err != nil {
			return r, err
		}
		line++
		v, err := enc.Encode(nil, r.Value)
		if err != nil {
			return r, fmt.Errorf("record %d: %w", line, err)
		}
		r.Value = v
		return r, nil
	}
}

// decodeRecord decodes r's value with dec in place, or adds an
// eddy.decode.error header saying why it cannot.
func decodeRecord(ctx context.Context, dec *schemas.Decoder, r *abi.Record) {
	v, err := dec.Decode(ctx, nil, r.Value)
	if err != nil {
		r.Headers = append(r.Headers, abi.Header{Key: "eddy.decode.error", Value: []byte(err.Error())})
		return
	}
	r.Value = v
}
