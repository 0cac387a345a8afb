package server

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/groundcrew/groundcrew/gateway/internal/codec"
)

// explain makes an InvalidArgument something a client can act on: a
// google.rpc.BadRequest whose field paths are spelt as the client sends
// them. A backend's violations name fields in proto names relative to the
// request message ("round_config.max_results", "update.message.text");
// they become JSON names relative to the body ("roundConfig.maxResults",
// "message.text"), found by walking the route's request descriptor. A
// decode error the gateway raised itself (bad JSON, a wrong type, an
// unknown enum value, in the body or the query) reaches here as bare text;
// the decode is replayed to get its field. The message follows the
// violations and never starts with protojson's "proto:". ctx is the
// route's (runtime.RPCMethod names the method); r may be nil for a stream
// already under way.
func explain(ctx context.Context, j *codec.JSON, r *http.Request, err error) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		return err
	}
	method := rpcMethod(ctx)
	p := st.Proto()
	var br *errdetails.BadRequest
	var kept []*anypb.Any
	for _, d := range p.GetDetails() {
		switch {
		case d.MessageIs((*errdetails.BadRequest)(nil)):
			br = &errdetails.BadRequest{}
			if d.UnmarshalTo(br) != nil {
				return err
			}
		case strings.HasSuffix(d.GetTypeUrl(), "/buf.validate.Violations"):
			// The same violations in proto names: the BadRequest says
			// them as the client spells them.
		default:
			kept = append(kept, d)
		}
	}
	switch {
	case br != nil:
		if method != nil {
			in, body := method.Input(), httpBody(method)
			for _, v := range br.GetFieldViolations() {
				v.Field = jsonPath(in, v.GetField(), body)
			}
		}
		p.Message = "invalid request: " + describe(br)
	case len(p.GetDetails()) == 0 && r != nil:
		fe := replay(j, method, r)
		if fe == nil {
			p.Message = protoPrefix.ReplaceAllString(p.GetMessage(), "")
			return status.ErrorProto(p)
		}
		br = &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{
			{Field: fe.Field, Description: fe.Description},
		}}
		p.Message = fe.Description
		if fe.Field != "" {
			p.Message = "invalid request: " + fe.Error()
		}
	default:
		return err
	}
	a, aerr := anypb.New(br)
	if aerr != nil {
		return err
	}
	p.Details = append([]*anypb.Any{a}, kept...)
	return status.ErrorProto(p)
}

// protoPrefix is protojson's error prefix (a normal or a non-breaking
// space, chosen per build).
var protoPrefix = regexp.MustCompile(`proto:[\s\x{a0}]+(\((line \d+:\d+)\):[\s\x{a0}]*)?`)

func describe(br *errdetails.BadRequest) string {
	parts := make([]string, 0, len(br.GetFieldViolations()))
	for _, v := range br.GetFieldViolations() {
		if v.GetField() == "" {
			parts = append(parts, v.GetDescription())
			continue
		}
		parts = append(parts, v.GetField()+": "+v.GetDescription())
	}
	return strings.Join(parts, "; ")
}

// rpcMethod is the method the route behind ctx calls, nil when unknown.
func rpcMethod(ctx context.Context) protoreflect.MethodDescriptor {
	name, ok := runtime.RPCMethod(ctx)
	if !ok {
		return nil
	}
	// "/pkg.Service/Method" → "pkg.Service.Method".
	full := strings.Replace(strings.TrimPrefix(name, "/"), "/", ".", 1)
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(full))
	if err != nil {
		return nil
	}
	m, _ := d.(protoreflect.MethodDescriptor)
	return m
}

// httpBody is the method's http rule's body: "*", a field name, or "".
func httpBody(m protoreflect.MethodDescriptor) string {
	rule, _ := proto.GetExtension(m.Options(), annotations.E_Http).(*annotations.HttpRule)
	return rule.GetBody()
}

// replay decodes r's body and query again as the route did, and returns
// the error that stopped it; nil when both decode (the error came from
// elsewhere).
func replay(j *codec.JSON, method protoreflect.MethodDescriptor, r *http.Request) *codec.FieldError {
	if method == nil {
		return nil
	}
	in, body := method.Input(), httpBody(method)
	if b, ok := r.Body.(interface{ Bytes() []byte }); ok && body != "" && len(bytes.TrimSpace(b.Bytes())) > 0 {
		var target proto.Message
		if body == "*" {
			target = newMessage(in)
		} else if fd := in.Fields().ByName(protoreflect.Name(body)); fd != nil && fd.Message() != nil {
			target = newMessage(fd.Message())
		}
		if target != nil {
			if err := j.Unmarshal(b.Bytes(), target); err != nil {
				var fe *codec.FieldError
				if errors.As(err, &fe) {
					return fe
				}
				return &codec.FieldError{Description: err.Error()}
			}
		}
	}
	// A route whose body is the whole request reads no query parameters.
	if q := r.URL.Query(); len(q) > 0 && body != "*" {
		if err := (codec.QueryParser{}).Parse(newMessage(in), q, utilities.NewDoubleArray(nil)); err != nil {
			var fe *codec.FieldError
			if errors.As(err, &fe) {
				return fe
			}
		}
	}
	return nil
}

// newMessage returns an empty message of md's type: the generated one when
// it is linked in.
func newMessage(md protoreflect.MessageDescriptor) proto.Message {
	if mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName()); err == nil {
		return mt.New().Interface()
	}
	return dynamicpb.NewMessage(md)
}

// jsonPath rewrites a field path in proto names (protovalidate's form:
// "round_config.max_results", "documents[0].url", `labels["app"]`) into
// the JSON names of md's fields, relative to the request body: with a
// route that maps one field as its body, that field's name is dropped.
// Names it does not find are kept as they are.
func jsonPath(md protoreflect.MessageDescriptor, path, body string) string {
	type seg struct{ name, subs string }
	var segs []seg
	for rest := path; rest != ""; {
		var s seg
		s.name, s.subs, rest = splitSegment(rest)
		segs = append(segs, s)
	}
	if body != "" && body != "*" && len(segs) > 1 && segs[0].name == body && segs[0].subs == "" && md != nil {
		// The client sent this field as the body itself.
		if fd := md.Fields().ByName(protoreflect.Name(body)); fd != nil && fd.Message() != nil {
			md, segs = fd.Message(), segs[1:]
		}
	}
	var out strings.Builder
	for i, s := range segs {
		var fd protoreflect.FieldDescriptor
		if md != nil {
			if fd = md.Fields().ByName(protoreflect.Name(s.name)); fd == nil {
				fd = md.Fields().ByJSONName(s.name)
			}
		}
		if i > 0 {
			out.WriteByte('.')
		}
		if fd != nil {
			out.WriteString(fd.JSONName())
		} else {
			out.WriteString(s.name)
		}
		out.WriteString(s.subs)
		md = nil
		if fd != nil {
			switch {
			case fd.IsMap():
				if v := fd.MapValue(); v.Kind() == protoreflect.MessageKind {
					md = v.Message()
				}
			case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
				md = fd.Message()
			}
		}
	}
	return out.String()
}

// splitSegment splits the first segment off a field path: its name, its
// subscripts ("[0]", `["a.b"]`) as written, and the rest after the dot.
func splitSegment(path string) (name, subs, rest string) {
	i := strings.IndexAny(path, ".[")
	if i < 0 {
		return path, "", ""
	}
	name = path[:i]
	j := i
	for j < len(path) && path[j] == '[' {
		k := j + 1
		if k < len(path) && path[k] == '"' {
			// A quoted key: up to its closing quote, escapes skipped.
			for k++; k < len(path) && path[k] != '"'; k++ {
				if path[k] == '\\' {
					k++
				}
			}
		}
		end := strings.IndexByte(path[min(k, len(path)):], ']')
		if end < 0 {
			return name, path[j:], ""
		}
		j = k + end + 1
	}
	subs = path[i:j]
	rest = strings.TrimPrefix(path[j:], ".")
	return name, subs, rest
}
