// Package codec holds the gateway's wire formats: protojson that also
// accepts enum names in any case ("local" for LOCAL) and refuses deeply
// nested documents up front, and Server-Sent Events for server streams.
package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/genproto/googleapis/api/httpbody"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// JSON is protojson as the gateway speaks it: lowerCamelCase out with zero
// values included (clients can rely on "isOutOfScope": false being there;
// unset optional fields stay absent), either spelling in, unknown fields ignored (webhook senders add fields over time),
// and enum values matched without regard to case. Strict protojson runs
// first, so well-formed requests pay nothing extra; only input it rejects
// goes through [Normalize] and a second strict pass. (protojson's own
// DiscardUnknown would also drop unknown enum names silently, turning
// "engine": "bing" into the default engine; this does not.)
//
// Input nested deeper than the configured depth is refused with a
// [*DepthError] before either decoder sees it.
type JSON struct {
	runtime.JSONPb
	maxDepth int
}

var _ runtime.Marshaler = (*JSON)(nil)

// DefaultMaxDepth is how deeply request JSON may nest (arrays and objects)
// when the gateway is not told otherwise. No groundcrew request needs more
// than a handful of levels; alert metadata gets the rest.
const DefaultMaxDepth = 64

// NewJSON returns the gateway's JSON marshaler, refusing request bodies whose
// arrays and objects nest more than maxDepth levels deep (DefaultMaxDepth
// when maxDepth is not positive).
func NewJSON(maxDepth int) *JSON {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	return &JSON{
		JSONPb: runtime.JSONPb{
			MarshalOptions: protojson.MarshalOptions{EmitUnpopulated: true},
			UnmarshalOptions: protojson.UnmarshalOptions{
				DiscardUnknown: false,
				// protojson counts messages, not JSON levels, and a scalar
				// google.protobuf.Value or wrapper is a message one level
				// below its JSON container: maxDepth+1 is the least limit
				// that every document passing the depth scan also passes.
				// It backs up the scan rather than replacing it, since
				// protojson only finds out after recursing that far.
				RecursionLimit: maxDepth + 1,
			},
		},
		maxDepth: maxDepth,
	}
}

// ContentType is JSON's, except for a response whose body is a
// google.api.HttpBody (a calendar feed): that names its own type.
func (j *JSON) ContentType(v any) string {
	if b, ok := httpBody(v); ok {
		return b.GetContentType()
	}
	return j.JSONPb.ContentType(v)
}

// Marshal writes v as JSON, or an HttpBody's bytes as they are.
func (j *JSON) Marshal(v any) ([]byte, error) {
	if b, ok := httpBody(v); ok {
		return b.GetData(), nil
	}
	if st, ok := v.(*statuspb.Status); ok {
		return marshalStatus(st)
	}
	return j.JSONPb.Marshal(v)
}

// marshalStatus writes an error as the edge's own errors are written:
// code, message and details, always, but inside the details only what is
// set (a field violation without "reason": "" and "localizedMessage":
// null).
func marshalStatus(st *statuspb.Status) ([]byte, error) {
	b, err := protojson.Marshal(st)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	details := out["details"]
	if details == nil {
		details = json.RawMessage("[]")
	}
	// Field by field, in this order, like edge.WriteError.
	return json.Marshal(struct {
		Code    int32           `json:"code"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	}{st.GetCode(), st.GetMessage(), details})
}

// httpBody finds the google.api.HttpBody v is or, for an RPC whose
// response_body names one, holds.
func httpBody(v any) (*httpbody.HttpBody, bool) {
	if rb, ok := v.(interface{ XXX_ResponseBody() any }); ok {
		v = rb.XXX_ResponseBody()
	}
	b, ok := v.(*httpbody.HttpBody)
	return b, ok && b != nil
}

// DepthError reports a request body nested deeper than the gateway accepts.
type DepthError struct {
	// Limit is the deepest nesting accepted.
	Limit int
}

// Error says how deep the gateway accepts, in words fit for the client.
func (e *DepthError) Error() string {
	return fmt.Sprintf("request body: JSON nested deeper than %d levels", e.Limit)
}

// Unmarshal decodes data into v, retrying once on normalised input. Data
// nested deeper than the marshaler's limit is refused first, with a
// [*DepthError], after one pass over the bytes that allocates nothing: the
// decoders would only find out after recursing, and allocating, that deep
// (encoding/json, in the normalising pass, up to 10,000 levels). Every
// other failure is a [*FieldError] naming the field as the client spelt
// it.
func (j *JSON) Unmarshal(data []byte, v any) error {
	if depth(data, j.maxDepth) > j.maxDepth {
		return &DepthError{Limit: j.maxDepth}
	}
	msg, ok := target(v)
	if !ok {
		// Not a message body (a scalar or list field mapped as the body):
		// nothing to normalise against.
		if err := j.JSONPb.Unmarshal(data, v); err != nil {
			return decodeError(data, nil, err)
		}
		return nil
	}
	md := msg.ProtoReflect().Descriptor()
	err := j.JSONPb.Unmarshal(data, msg)
	if err == nil {
		return nil
	}
	fixed, nerr := Normalize(data, md)
	if nerr != nil {
		return nerr
	}
	if fixed == nil {
		return decodeError(data, md, err)
	}
	proto.Reset(msg)
	if err := j.JSONPb.Unmarshal(fixed, msg); err != nil {
		// The positions are in the normalised document, whose keys are
		// still the client's.
		return decodeError(fixed, md, err)
	}
	return nil
}

// target returns the message a decode into v fills, whatever the route's
// body mapping: v itself for `body: "*"` (the generated handler passes the
// request message), or the field's message for `body: "field"` (it passes a
// pointer to the field, a nil **T until now, which is allocated here). One
// rule for both is the point: before, only the first went through
// [Normalize], so a route mapping a field as its body (the Telegram webhook)
// answered 400 to any field the proto does not declare.
func target(v any) (proto.Message, bool) {
	if m, ok := v.(proto.Message); ok {
		return m, true
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil, false
	}
	field := rv.Elem()
	if field.Kind() != reflect.Pointer || !field.Type().Implements(messageType) {
		return nil, false
	}
	if field.IsNil() {
		field.Set(reflect.New(field.Type().Elem()))
	}
	return field.Interface().(proto.Message), true
}

var messageType = reflect.TypeFor[proto.Message]()

// NewDecoder reads the whole body (the edge already bounds its size) and
// decodes it with Unmarshal. A body the edge has already read whole (it
// has a Bytes method, as edge.Body does) is decoded from its bytes, not
// copied again.
func (j *JSON) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error {
		var data []byte
		if b, ok := r.(interface{ Bytes() []byte }); ok {
			data = b.Bytes()
		} else {
			var err error
			if data, err = io.ReadAll(r); err != nil {
				return err
			}
		}
		if len(bytes.TrimSpace(data)) == 0 {
			// An empty body is an empty message, as with no body at all.
			return nil
		}
		return j.Unmarshal(data, v)
	})
}

// depth returns how deeply the arrays and objects of the JSON document data
// nest, looking at each byte once and stopping as soon as the nesting passes
// limit (so the result is at most limit+1). String contents, escaped quotes
// included, are skipped, so brackets inside strings do not count. It does not
// validate: on malformed input the result is only an estimate, which is
// enough, because the decoders reject such input at the first bad token,
// before nesting deeper than the scan saw. Closers without an opener are not
// counted, so a junk prefix such as "]]]" cannot hide the nesting after it.
func depth(data []byte, limit int) int {
	level, deepest := 0, 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data); i++ {
				if data[i] == '\\' {
					i++ // whatever follows a backslash is escaped, '"' and '\\' included
					continue
				}
				if data[i] == '"' {
					break
				}
			}
		case '{', '[':
			level++
			if level > deepest {
				deepest = level
				if deepest > limit {
					return deepest
				}
			}
		case '}', ']':
			if level > 0 {
				level--
			}
		}
	}
	return deepest
}

// Normalize rewrites a JSON document so that strict protojson accepts what
// the gateway means to accept: enum values in any case ("local" and "Local"
// become "LOCAL", "needs-review" becomes "NEEDS_REVIEW") and no fields the
// message does not have. It returns nil when the document is not a JSON
// object it can walk, and an error naming the field when an enum value
// matches no name at all (a [*FieldError]). Callers bound the document's nesting first, as
// [JSON.Unmarshal] does: encoding/json allows 10,000 levels.
func Normalize(data []byte, md protoreflect.MessageDescriptor) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, nil
	}
	if err := normalizeMessage(doc, md, ""); err != nil {
		return nil, err
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, nil
	}
	return out, nil
}

func normalizeMessage(node any, md protoreflect.MessageDescriptor, path string) error {
	obj, ok := node.(map[string]any)
	if !ok || md == nil {
		return nil
	}
	// In key order, so that of several bad fields the same one is named
	// every time.
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		fd := findField(md, key)
		if fd == nil {
			delete(obj, key)
			continue
		}
		if err := normalizeField(obj, key, obj[key], fd, join(path, key)); err != nil {
			return err
		}
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func normalizeField(obj map[string]any, key string, val any, fd protoreflect.FieldDescriptor, path string) error {
	switch {
	case fd.IsMap():
		m, ok := val.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			nv, err := normalizeSingular(m[k], fd.MapValue(), path+"["+strconv.Quote(k)+"]")
			if err != nil {
				return err
			}
			m[k] = nv
		}
	case fd.IsList():
		list, ok := val.([]any)
		if !ok {
			return nil
		}
		for i, v := range list {
			nv, err := normalizeSingular(v, fd, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return err
			}
			list[i] = nv
		}
	default:
		nv, err := normalizeSingular(val, fd, path)
		if err != nil {
			return err
		}
		obj[key] = nv
	}
	return nil
}

// normalizeSingular returns the replacement for one value; messages are
// rewritten in place.
func normalizeSingular(val any, fd protoreflect.FieldDescriptor, path string) (any, error) {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		s, ok := val.(string)
		if !ok || fd.Enum().FullName() == "google.protobuf.NullValue" {
			return val, nil
		}
		name, ok := EnumValueName(fd.Enum(), s)
		if !ok {
			return nil, enumError(path, s, fd.Enum())
		}
		return name, nil
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if fd.Message().FullName() == "google.protobuf.Struct" {
			if _, ok := val.(map[string]any); !ok && val != nil {
				return nil, &FieldError{Field: path, Description: "must be a JSON object"}
			}
			return val, nil
		}
		if isWellKnown(fd.Message()) {
			return val, nil
		}
		return val, normalizeMessage(val, fd.Message(), path)
	}
	return val, nil
}

func enumNames(ed protoreflect.EnumDescriptor) string {
	var names []string
	for i := range ed.Values().Len() {
		v := ed.Values().Get(i)
		if v.Number() == 0 {
			continue
		}
		names = append(names, string(v.Name()))
	}
	return strings.Join(names, ", ")
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
// enum values matched without regard to case (?status=pending). A value it
// cannot take is a [*FieldError] naming the parameter as the client spelt
// it; an unknown enum value lists the valid ones, as in a body.
type QueryParser struct{}

var _ runtime.QueryParameterParser = QueryParser{}

// Parse implements runtime.QueryParameterParser.
func (QueryParser) Parse(msg proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	md := msg.ProtoReflect().Descriptor()
	// One parameter at a time, in order, so that an error names the
	// parameter it is about.
	for _, key := range slices.Sorted(maps.Keys(values)) {
		vals := values[key]
		fd := fieldByPath(md, key)
		if fd != nil && fd.Kind() == protoreflect.EnumKind {
			out := make([]string, len(vals))
			for i, v := range vals {
				name, ok := EnumValueName(fd.Enum(), v)
				if _, err := strconv.Atoi(v); !ok && err != nil {
					return enumError(key, v, fd.Enum())
				}
				if ok {
					v = name
				}
				out[i] = v
			}
			vals = out
		}
		if err := (&runtime.DefaultQueryParser{}).Parse(msg, url.Values{key: vals}, filter); err != nil {
			return queryError(key, vals, fd, err)
		}
	}
	return nil
}

// enumError says value names no value of ed, and which ones there are.
func enumError(field, value string, ed protoreflect.EnumDescriptor) *FieldError {
	return &FieldError{Field: field, Description: fmt.Sprintf("invalid value %q: want one of %s", value, enumNames(ed))}
}

// queryError words the default parser's err about parameter key: for a
// value of the wrong kind, what kind it wants.
func queryError(key string, vals []string, fd protoreflect.FieldDescriptor, err error) *FieldError {
	var num *strconv.NumError
	if fd != nil && errors.As(err, &num) {
		return &FieldError{Field: key, Description: fmt.Sprintf("invalid value %q: want %s", num.Num, kindName(fd))}
	}
	if fd != nil && len(vals) > 1 && !fd.IsList() {
		return &FieldError{Field: key, Description: "given more than once"}
	}
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "parsing ") {
		msg = msg[i+2:]
	}
	return &FieldError{Field: key, Description: msg}
}

// kindName says what a value of fd's kind looks like.
func kindName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return "true or false"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "an integer"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "a non-negative integer"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "a number"
	}
	return "a " + fd.Kind().String()
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
