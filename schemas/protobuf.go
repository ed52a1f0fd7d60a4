package schemas

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// maxIndexes bounds a Protobuf value's message indexes (the path to its
// message type through nested messages).
const maxIndexes = 16

// protoSchema is a compiled .proto file.
type protoSchema struct {
	file protoreflect.FileDescriptor
}

// protoFile is the name a registry schema is compiled under; references
// are compiled under their own names (the import paths the file uses).
const protoFile = "eddy-registry-schema.proto"

func parseProto(text string, refs map[string]string) (*protoSchema, error) {
	srcs := map[string]string{protoFile: text}
	for name, t := range refs {
		srcs[name] = t
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: protocompile.SourceAccessorFromMap(srcs),
		}),
	}
	files, err := c.Compile(context.Background(), protoFile)
	if err != nil {
		return nil, err
	}
	if files[0].Messages().Len() == 0 {
		return nil, fmt.Errorf("the file defines no message")
	}
	return &protoSchema{file: files[0]}, nil
}

// message is the message type the Confluent message indexes name: the
// first a top-level message, each next one nested in the one before.
func (s *protoSchema) message(index []int) (protoreflect.MessageDescriptor, error) {
	if len(index) == 0 {
		index = []int{0}
	}
	msgs := s.file.Messages()
	var md protoreflect.MessageDescriptor
	for _, i := range index {
		if i < 0 || i >= msgs.Len() {
			return nil, fmt.Errorf("message index %v names no message of the schema", index)
		}
		md = msgs.Get(i)
		msgs = md.Messages()
	}
	return md, nil
}

// byName is the message type called name (its full name, or its name
// if no other has it), with its message indexes; "" is the file's first.
func (s *protoSchema) byName(name string) (protoreflect.MessageDescriptor, []int, error) {
	if name == "" {
		return s.file.Messages().Get(0), []int{0}, nil
	}
	var found protoreflect.MessageDescriptor
	var index []int
	var walk func(msgs protoreflect.MessageDescriptors, path []int)
	walk = func(msgs protoreflect.MessageDescriptors, path []int) {
		for i := range msgs.Len() {
			md := msgs.Get(i)
			p := append(slices.Clip(path), i)
			if string(md.FullName()) == name || string(md.Name()) == name && found == nil {
				found, index = md, p
			}
			walk(md.Messages(), p)
		}
	}
	walk(s.file.Messages(), nil)
	if found == nil {
		return nil, nil, fmt.Errorf("the schema has no message %q", name)
	}
	return found, index, nil
}

// decode reads b, a message of type md, into a plain value: an object of
// its fields by their .proto names (a field without presence always, one
// with presence when set), 64-bit integers as numbers, enums as their
// value names, bytes as bytes.
func decodeProto(md protoreflect.MessageDescriptor, b []byte) (any, error) {
	m := dynamicpb.NewMessage(md)
	if err := (proto.UnmarshalOptions{RecursionLimit: maxDepth}).Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("not a %s: %w", md.FullName(), err)
	}
	return plainMessage(m), nil
}

func plainMessage(m protoreflect.Message) map[string]any {
	fields := m.Descriptor().Fields()
	out := make(map[string]any, fields.Len())
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue
		}
		out[string(fd.Name())] = plainField(fd, m.Get(fd))
	}
	return out
}

func plainField(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch {
	case fd.IsList():
		l := v.List()
		out := make([]any, l.Len())
		for i := range out {
			out[i] = plainScalar(fd, l.Get(i))
		}
		return out
	case fd.IsMap():
		out := map[string]any{}
		v.Map().Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
			out[k.String()] = plainScalar(fd.MapValue(), v)
			return true
		})
		return out
	}
	return plainScalar(fd, v)
}

func plainScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value) any {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return plainMessage(v.Message())
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			return string(ev.Name())
		}
		return int64(v.Enum())
	case protoreflect.BytesKind:
		return append([]byte{}, v.Bytes()...) // empty, not null, when unset
	}
	return v.Interface() // bool, int32, int64, uint32, uint64, float32, float64, string
}

// encodeProto appends v, a plain value, as a message of type md: v's
// JSON read as protojson reads it (fields by .proto or JSON name, 64-bit
// integers as numbers or strings, enums by name or number, bytes in
// base64); a field md does not have fails.
func encodeProto(b []byte, md protoreflect.MessageDescriptor, v any) ([]byte, error) {
	if _, ok := v.(map[string]any); !ok {
		return b, fmt.Errorf("%w: want an object for message %s, got %s", errNotFit, md.FullName(), describe(v))
	}
	j, err := toJSON(v)
	if err != nil {
		return b, err
	}
	m := dynamicpb.NewMessage(md)
	if err := (protojson.UnmarshalOptions{RecursionLimit: maxDepth}).Unmarshal(j, m); err != nil {
		return b, fmt.Errorf("%w: as a %s: %s", errNotFit, md.FullName(), strings.TrimPrefix(err.Error(), "proto: "))
	}
	out, err := (proto.MarshalOptions{Deterministic: true}).MarshalAppend(b, m)
	if err != nil {
		return b, fmt.Errorf("%w: as a %s: %w", errNotFit, md.FullName(), err)
	}
	return out, nil
}
