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

// decodeProto reads b, a message of type md, into out: an object of its
// fields by their .proto names, in field order (a field without presence
// always, one with presence when set), 64-bit integers as numbers, enums
// as their value names, bytes as bytes, map entries by key.
func decodeProto(md protoreflect.MessageDescriptor, b []byte, out plainOut) error {
	m := dynamicpb.NewMessage(md)
	if err := (proto.UnmarshalOptions{RecursionLimit: maxDepth}).Unmarshal(b, m); err != nil {
		return fmt.Errorf("not a %s: %w", md.FullName(), err)
	}
	walkMessage(m, out)
	return out.err()
}

func walkMessage(m protoreflect.Message, out plainOut) {
	fields := m.Descriptor().Fields()
	out.beginObject()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.HasPresence() && !m.Has(fd) {
			continue
		}
		out.key(string(fd.Name()))
		walkField(fd, m.Get(fd), out)
	}
	out.end()
}

func walkField(fd protoreflect.FieldDescriptor, v protoreflect.Value, out plainOut) {
	switch {
	case fd.IsList():
		l := v.List()
		out.beginArray()
		for i := range l.Len() {
			walkScalar(fd, l.Get(i), out)
		}
		out.end()
		return
	case fd.IsMap():
		mp := v.Map()
		keys := make([]protoreflect.MapKey, 0, mp.Len())
		mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
			keys = append(keys, k)
			return true
		})
		slices.SortFunc(keys, func(a, b protoreflect.MapKey) int { return strings.Compare(a.String(), b.String()) })
		out.beginObject()
		for _, k := range keys {
			out.key(k.String())
			walkScalar(fd.MapValue(), mp.Get(k), out)
		}
		out.end()
		return
	}
	walkScalar(fd, v, out)
}

func walkScalar(fd protoreflect.FieldDescriptor, v protoreflect.Value, out plainOut) {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		walkMessage(v.Message(), out)
	case protoreflect.EnumKind:
		if ev := fd.Enum().Values().ByNumber(v.Enum()); ev != nil {
			out.str(string(ev.Name()))
		} else {
			out.integer(int64(v.Enum()))
		}
	case protoreflect.BytesKind:
		out.bin(v.Bytes())
	case protoreflect.BoolKind:
		out.boolean(v.Bool())
	case protoreflect.StringKind:
		out.str(v.String())
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		out.float(v.Float())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		out.unsigned(v.Uint())
	default: // the signed integers
		out.integer(v.Int())
	}
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
