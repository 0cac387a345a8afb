package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// FieldError is a request the gateway could not decode, pinned to where
// decoding failed: the field's path as the client spelt it
// ("roundConfig.maxResults", "documents[2].url", `labels["app"]`, or a
// query parameter's name), or "" for the body as a whole (not JSON at all,
// nested too deep). Its description never carries protojson's "proto:"
// prefix or positions.
type FieldError struct {
	// Field is the path of the field, "" for the whole body.
	Field string
	// Description says what is wrong with it.
	Description string
}

// Error is the field and what is wrong with it.
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Description
	}
	return e.Field + ": " + e.Description
}

// protoPrefix is protojson's error prefix; the library picks a normal or a
// non-breaking space at random per build, so that nobody matches on it.
var protoPrefix = regexp.MustCompile(`^proto:[\s\x{a0}]+`)

// protoPosition is the position protojson puts after the prefix:
// "(line 1:15): " or "syntax error (line 1:5): ".
var protoPosition = regexp.MustCompile(`^(syntax error )?\(line (\d+):(\d+)\):[\s\x{a0}]*`)

// decodeError turns err, from decoding data into a message of md (nil when
// the body is not a message), into a [*FieldError]: the path of the JSON
// value at the position protojson reports, and its message without prefix
// and position.
func decodeError(data []byte, md protoreflect.MessageDescriptor, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		return err
	}
	// grpc-gateway reads the document with encoding/json before protojson
	// sees it: syntax errors come from there, with a byte offset.
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		at := max(int(syntax.Offset)-1, 0)
		return &FieldError{Field: pathAt(data, at, md), Description: "invalid JSON: " + syntax.Error()}
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		return &FieldError{Field: pathAt(data, int(typ.Offset), md), Description: "invalid JSON: " + typ.Error()}
	}
	// protojson's positions count from the document's first byte, past
	// leading white space.
	data = bytes.TrimLeft(data, " \t\r\n")
	msg := protoPrefix.ReplaceAllString(err.Error(), "")
	m := protoPosition.FindStringSubmatch(msg)
	if m == nil {
		return &FieldError{Description: msg}
	}
	desc := msg[len(m[0]):]
	if m[1] != "" {
		desc = "invalid JSON: " + desc
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	return &FieldError{Field: pathAt(data, offset(data, line, col), md), Description: desc}
}

// offset turns protojson's 1-based line and column (in runes) into a byte
// offset into data.
func offset(data []byte, line, col int) int {
	i := 0
	for l := 1; l < line && i < len(data); i++ {
		if data[i] == '\n' {
			l++
		}
	}
	for c := 1; c < col && i < len(data); c++ {
		_, size := utf8.DecodeRune(data[i:])
		i += size
	}
	return i
}

// segment is one step of a JSON path: an object key or an array index.
type segment struct {
	key   string
	index int
	array bool
}

// pathAt returns the path of the JSON value (or key) at byte offset off of
// data, as the client spelt it, formatted against md: message fields as
// ".name", map and Struct keys as `["key"]`, list indexes as "[i]". It
// reads data only up to off, so it works on documents that are not valid
// JSON past that point.
func pathAt(data []byte, off int, md protoreflect.MessageDescriptor) string {
	var stack []segment
	// keyNext: in an object, the next string is a key.
	keyNext := false
	for i := 0; i < off && i < len(data); i++ {
		switch data[i] {
		case '{':
			stack = append(stack, segment{})
			keyNext = true
		case '[':
			stack = append(stack, segment{array: true})
			keyNext = false
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			keyNext = false
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].array {
					stack[n-1].index++
				} else {
					stack[n-1].key = ""
					keyNext = true
				}
			}
		case '"':
			s, end := readString(data, i)
			if keyNext && len(stack) > 0 && !stack[len(stack)-1].array {
				stack[len(stack)-1].key = s
				keyNext = false
			}
			i = end
		}
	}
	// An error at a key (a duplicate field) names that key.
	if off < len(data) && data[off] == '"' && keyNext && len(stack) > 0 && !stack[len(stack)-1].array {
		stack[len(stack)-1].key, _ = readString(data, off)
	}
	return formatPath(stack, md)
}

// readString reads the JSON string starting at data[start] (a quote) and
// returns its contents, unescaped as far as a path needs, and the index of
// its closing quote.
func readString(data []byte, start int) (string, int) {
	var b strings.Builder
	i := start + 1
	for ; i < len(data); i++ {
		switch data[i] {
		case '\\':
			if i+1 < len(data) {
				i++
				switch data[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case 'u':
					if i+4 < len(data) {
						if r, err := strconv.ParseUint(string(data[i+1:i+5]), 16, 32); err == nil {
							b.WriteRune(rune(r))
							i += 4
							continue
						}
					}
					b.WriteByte('u')
				default:
					b.WriteByte(data[i])
				}
			}
		case '"':
			return b.String(), i
		default:
			b.WriteByte(data[i])
		}
	}
	return b.String(), i
}

// formatPath writes the segments as a field path, reading md alongside to
// tell message fields from map keys.
func formatPath(stack []segment, md protoreflect.MessageDescriptor) string {
	var b strings.Builder
	// keyed: the current object is a map or a Struct, not a message;
	// mapValue: the message a map's values are, once past the key.
	keyed := md == nil
	var mapValue protoreflect.MessageDescriptor
	for _, s := range stack {
		if s.array {
			fmt.Fprintf(&b, "[%d]", s.index)
			continue
		}
		if s.key == "" {
			break
		}
		if keyed {
			fmt.Fprintf(&b, "[%s]", strconv.Quote(s.key))
			if mapValue != nil {
				md, keyed, mapValue = mapValue, false, nil
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.key)
		fd := findField(md, s.key)
		switch {
		case fd == nil:
			md, keyed = nil, true
		case fd.IsMap():
			md, keyed = nil, true
			if v := fd.MapValue(); v.Kind() == protoreflect.MessageKind && !isWellKnown(v.Message()) {
				// The map's values are messages: the key is followed by
				// the value's fields.
				mapValue = v.Message()
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			md = fd.Message()
			keyed = isWellKnown(md)
		default:
			md, keyed = nil, true
		}
	}
	return b.String()
}
