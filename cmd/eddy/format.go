package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/pipeline"
)

// formatFlags are --format and --pipeline of the commands that read or
// write JSON lines of records (produce, consume, test): the format of the
// record values, given or taken from a pipeline file.
type formatFlags struct {
	format   string
	pipeline string
	// withRegistry: the command reads or writes the schema registry
	// formats (produce, consume), with the flags of reg.
	withRegistry bool
	reg          registryFlags
	loaded       *pipeline.Pipeline // --pipeline's, once resolve read it
}

// formatHelp is the commands' help about --format.
const formatHelp = `--format msgpack: the values are MessagePack (a pipeline with source.format:
msgpack). JSON-lines values are then JSON that is converted to MessagePack
(objects become maps, numbers integers or float64s, strings strings), and
MessagePack values are shown as JSON (maps with their keys sorted, binary as
base64 strings, timestamps as RFC 3339 strings); bytes that are not
MessagePack are shown as "value_b64". Keys are as without it (--base64 then
applies to keys only). --format json or bytes: values as they are. The
default is the format of --pipeline's source (for its sink topic, the
sink's; for eddy test, what its functions receive; a schema registry
format's values are shown as they are, except by produce and consume), else
json.`

func (f *formatFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	if f.withRegistry {
		fl.StringVar(&f.format, "format", "", "format of the values: json, msgpack, bytes, avro, protobuf or json_schema (default: --pipeline's, else json)")
		fl.StringVar(&f.reg.url, "registry", "", "schema registry URL for avro, protobuf and json_schema (default: --pipeline's, else "+defaultRegistry+")")
	} else {
		fl.StringVar(&f.format, "format", "", "format of the values: json, msgpack or bytes (default: --pipeline's, else json)")
	}
	fl.StringVar(&f.pipeline, "pipeline", "", "a pipeline file whose formats give --format's default")
}

// resolve returns the values' format: --format, or the pipeline file's
// format for topic (the sink's for its sink topic, else the source's; ""
// for the values its functions receive), bytes for a schema registry
// format, or json.
func (f *formatFlags) resolve(topic string) (string, error) {
	if f.pipeline != "" {
		p, err := host.LoadPipeline(f.pipeline)
		if err != nil {
			return "", fmt.Errorf("--pipeline: %w", err)
		}
		f.loaded = p
	}
	switch {
	case f.format == pipeline.FormatJSON || f.format == pipeline.FormatMsgpack || f.format == pipeline.FormatBytes:
		return f.format, nil
	case f.withRegistry && pipeline.IsRegistryFormat(f.format):
		return f.format, nil
	case f.format == "":
	case f.withRegistry:
		return "", fmt.Errorf("--format: want json, msgpack, bytes, avro, protobuf or json_schema, got %q", f.format)
	default:
		return "", fmt.Errorf("--format: want json, msgpack or bytes, got %q", f.format)
	}
	p := f.loaded
	if p == nil {
		return pipeline.FormatJSON, nil
	}
	var format string
	switch topic {
	case "":
		format = p.Source.ValueFormat() // what its functions receive
	case p.Sink.Topic:
		format = p.Sink.Format
	default:
		format = p.Source.Format
	}
	if pipeline.IsRegistryFormat(format) && !f.withRegistry {
		// The Confluent wire format, which this command neither writes
		// nor decodes: the values as they are.
		return pipeline.FormatBytes, nil
	}
	return format, nil
}
