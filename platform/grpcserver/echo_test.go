package grpcserver_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/groundcrew/groundcrew/platform/grpcserver"
)

// The test service is built from a descriptor at run time, so the tests need
// no generated code, and its request carries a real protovalidate rule:
//
//	package groundcrew.platformtest.v1;
//	message EchoRequest { string text = 1 [(buf.validate.field).string = {min_len: 1, max_len: 10}]; }
//	message EchoResponse { string text = 1; }
//	service EchoService {
//	  rpc Echo(EchoRequest) returns (EchoResponse);     // echoes text
//	  rpc Panic(EchoRequest) returns (EchoResponse);    // panics with text
//	  rpc Fail(EchoRequest) returns (EchoResponse);     // InternalError with text
//	  rpc Block(EchoRequest) returns (EchoResponse);    // waits for release or cancellation
//	  rpc EchoStream(EchoRequest) returns (stream EchoResponse);
//	}
const echoService = "groundcrew.platformtest.v1.EchoService"

var echoReqDesc, echoRespDesc = buildEchoDescriptors()

func buildEchoDescriptors() (protoreflect.MessageDescriptor, protoreflect.MessageDescriptor) {
	rules := &descriptorpb.FieldOptions{}
	proto.SetExtension(rules, validatepb.E_Field, &validatepb.FieldRules{
		Type: &validatepb.FieldRules_String_{String_: &validatepb.StringRules{
			MinLen: proto.Uint64(1),
			MaxLen: proto.Uint64(10),
		}},
	})
	textField := func(opts *descriptorpb.FieldOptions) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{
			Name:     proto.String("text"),
			JsonName: proto.String("text"),
			Number:   proto.Int32(1),
			Label:    descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type:     descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(),
			Options:  opts,
		}
	}
	fdp := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("groundcrew/platformtest/v1/echo.proto"),
		Package:    proto.String("groundcrew.platformtest.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"buf/validate/validate.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("EchoRequest"), Field: []*descriptorpb.FieldDescriptorProto{textField(rules)}},
			{Name: proto.String("EchoResponse"), Field: []*descriptorpb.FieldDescriptorProto{textField(nil)}},
		},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		panic(fmt.Sprintf("building test descriptors: %v", err))
	}
	return fd.Messages().ByName("EchoRequest"), fd.Messages().ByName("EchoResponse")
}

func newEchoRequest(text string) *dynamicpb.Message {
	m := dynamicpb.NewMessage(echoReqDesc)
	if text != "" {
		m.Set(echoReqDesc.Fields().ByName("text"), protoreflect.ValueOfString(text))
	}
	return m
}

func newEchoResponse(text string) *dynamicpb.Message {
	m := dynamicpb.NewMessage(echoRespDesc)
	m.Set(echoRespDesc.Fields().ByName("text"), protoreflect.ValueOfString(text))
	return m
}

func textOf(m proto.Message) string {
	return m.ProtoReflect().Get(m.ProtoReflect().Descriptor().Fields().ByName("text")).String()
}

// echoServer implements the test service. entered receives a value when
// Block starts; Block returns when release is closed or its context ends.
type echoServer struct {
	logger  *slog.Logger
	entered chan struct{}
	release chan struct{}
}

func newEchoServer(logger *slog.Logger) *echoServer {
	return &echoServer{logger: logger, entered: make(chan struct{}, 10), release: make(chan struct{})}
}

func (e *echoServer) call(ctx context.Context, method string, req *dynamicpb.Message) (proto.Message, error) {
	text := textOf(req)
	switch method {
	case "Echo":
		return newEchoResponse(text), nil
	case "Panic":
		panic(text)
	case "Fail":
		return nil, grpcserver.InternalError(ctx, e.logger, errors.New(text), "failing on purpose")
	case "Block":
		e.entered <- struct{}{}
		select {
		case <-e.release:
			return newEchoResponse(text), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return nil, fmt.Errorf("unknown method %s", method)
}

func unaryMethod(method string) grpc.MethodDesc {
	return grpc.MethodDesc{
		MethodName: method,
		Handler: func(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
			req := dynamicpb.NewMessage(echoReqDesc)
			if err := dec(req); err != nil {
				return nil, err
			}
			handler := func(ctx context.Context, req any) (any, error) {
				return srv.(*echoServer).call(ctx, method, req.(*dynamicpb.Message))
			}
			if interceptor == nil {
				return handler(ctx, req)
			}
			return interceptor(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/" + echoService + "/" + method}, handler)
		},
	}
}

var echoServiceDesc = grpc.ServiceDesc{
	ServiceName: echoService,
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{unaryMethod("Echo"), unaryMethod("Panic"), unaryMethod("Fail"), unaryMethod("Block")},
	Streams: []grpc.StreamDesc{{
		StreamName:    "EchoStream",
		ServerStreams: true,
		Handler: func(_ any, stream grpc.ServerStream) error {
			req := dynamicpb.NewMessage(echoReqDesc)
			if err := stream.RecvMsg(req); err != nil {
				return err
			}
			for range 2 {
				if err := stream.SendMsg(newEchoResponse(textOf(req))); err != nil {
					return err
				}
			}
			return nil
		},
	}},
	Metadata: "groundcrew/platformtest/v1/echo.proto",
}

// invoke calls a unary method of the test service.
func invoke(ctx context.Context, t *testing.T, conn *grpc.ClientConn, method, text string, opts ...grpc.CallOption) (string, error) {
	t.Helper()
	resp := dynamicpb.NewMessage(echoRespDesc)
	err := conn.Invoke(ctx, "/"+echoService+"/"+method, newEchoRequest(text), resp, opts...)
	if err != nil {
		return "", err
	}
	return textOf(resp), nil
}

var echoStreamDesc = &grpc.StreamDesc{StreamName: "EchoStream", ServerStreams: true}
