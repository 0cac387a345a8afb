// Package codec holds the gateway's wire formats: protojson that also
// accepts enum names in any case ("local" for LOCAL), and Server-Sent Events
// for server streams.
package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// JSON is protojson as the gateway speaks it: lowerCamelCase out, either
// spelling in, unknown fields ignored (webhook senders add fields over time),
// and enum values matched without regard to case. Strict protojson runs
// first; the lenient pass only runs on input it rejected, so well-formed
// requests pay nothing for it.
type JSON struct {
	runtime.JSONPb
}

var _ runtime.Marshaler = (*JSON)(nil)

// NewJSON returns the gateway's JSON marshaler.
func NewJSON() *JSON {
	return &JSON{JSONPb: runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: false},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: true},
	}}
}

// Unmarshal decodes data into v, retrying once with enum names normalised.
func (j *JSON) Unmarshal(data []byte, v any) error {
	err := j.JSONPb.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	msg, ok := v.(proto.Message)
	if !ok {
		return err
	}
	fixed, changed := NormalizeEnums(data, msg.ProtoReflect().Descriptor())
	if !changed {
		return err
	}
	proto.Reset(msg)
	if err2 := j.JSONPb.Unmarshal(fixed, v); err2 != nil {
		return err
	}
	return nil
}

// NewDecoder reads the whole body (the edge already bounds its size) and
// decodes it with Unmarshal.
func (j *JSON) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		data, err := io.ReadAll(r)
		if err != nil {
			return err
		}
		if len(bytes.TrimSpace(data)) == 0 {
			// An empty body is an empty message, as with no body at all.
			return nil
		}
		return j.Unmarshal(data, v)
	})
}

// NormalizeEnums rewrites enum values in a JSON document so that protojson
// accepts them: "local" and "Local" become "LOCAL", "needs-review" becomes
// "NEEDS_REVIEW". It reports whether anything changed.
func NormalizeEnums(data []byte, md protoreflect.MessageDescriptor) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return data, false
	}
	if !normalizeMessage(doc, md) {
		return data, false
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return data, false
	}
	return out, true
}

func normalizeMessage(node any, md protoreflect.MessageDescriptor) bool {
	obj, ok := node.(map[string]any)
	if !ok || md == nil {
		return false
	}
	changed := false
	for key, val := range obj {
		fd := findField(md, key)
		if fd == nil {
			continue
		}
		if normalizeField(obj, key, val, fd) {
			changed = true
		}
	}
	return changed
}

func normalizeField(obj map[string]any, key string, val any, fd protoreflect.FieldDescriptor) bool {
	switch {
	case fd.IsMap():
		m, ok := val.(map[string]any)
		if !ok {
			return false
		}
		changed := false
		for k, v := range m {
			if nv, ok := normalizeSingular(v, fd.MapValue()); ok {
				m[k] = nv
				changed = true
			}
		}
		return changed
	case fd.IsList():
		list, ok := val.([]any)
		if !ok {
			return false
		}
		changed := false
		for i, v := range list {
			if nv, ok := normalizeSingular(v, fd); ok {
				list[i] = nv
				changed = true
			}
		}
		return changed
	default:
		if nv, ok := normalizeSingular(val, fd); ok {
			obj[key] = nv
			return true
		}
		return false
	}
}

// normalizeSingular returns the replacement for one value and whether it
// changed; messages are rewritten in place.
func normalizeSingular(val any, fd protoreflect.FieldDescriptor) (any, bool) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		s, ok := val.(string)
		if !ok {
			return val, false
		}
		if name, ok := EnumValueName(fd.Enum(), s); ok && name != s {
			return name, true
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if isWellKnown(fd.Message()) {
			return val, false
		}
		return val, normalizeMessage(val, fd.Message())
	}
	return val, false
}

// EnumValueName finds the enum value s names, ignoring case and treating '-'
// and ' ' as '_'.
func EnumValueName(ed protoreflect.EnumDescriptor, s string) (string, bool) {
	if ed.Values().ByName(protoreflect.Name(s)) != nil {
		return s, true
	}
	want := strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToUpper(strings.TrimSpace(s)))
	if v := ed.Values().ByName(protoreflect.Name(want)); v != nil {
		return string(v.Name()), true
	}
	return "", false
}

func findField(md protoreflect.MessageDescriptor, key string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByJSONName(key); fd != nil {
		return fd
	}
	return md.Fields().ByName(protoreflect.Name(key))
}

func isWellKnown(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile() != nil && strings.HasPrefix(string(md.ParentFile().Package()), "google.protobuf")
}

// QueryParser parses query parameters like the gateway's default parser, with
// enum values matched without regard to case (?status=pending).
type QueryParser struct{}

var _ runtime.QueryParameterParser = QueryParser{}

// Parse implements runtime.QueryParameterParser.
func (QueryParser) Parse(msg proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	md := msg.ProtoReflect().Descriptor()
	fixed := make(url.Values, len(values))
	for key, vals := range values {
		fd := fieldByPath(md, key)
		if fd == nil || fd.Kind() != protoreflect.EnumKind {
			fixed[key] = vals
			continue
		}
		out := make([]string, len(vals))
		for i, v := range vals {
			if name, ok := EnumValueName(fd.Enum(), v); ok {
				out[i] = name
			} else {
				out[i] = v
			}
		}
		fixed[key] = out
	}
	if err := (&runtime.DefaultQueryParser{}).Parse(msg, fixed, filter); err != nil {
		return fmt.Errorf("query parameters: %w", err)
	}
	return nil
}

func fieldByPath(md protoreflect.MessageDescriptor, path string) protoreflect.FieldDescriptor {
	parts := strings.Split(path, ".")
	var fd protoreflect.FieldDescriptor
	for i, p := range parts {
		if md == nil {
			return nil
		}
		fd = findField(md, p)
		if fd == nil {
			return nil
		}
		if i < len(parts)-1 {
			md = fd.Message()
		}
	}
	return fd
}
