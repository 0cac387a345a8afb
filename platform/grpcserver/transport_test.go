package grpcserver_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/config/transporttest"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
)

const sharedToken = "s3cret-shared-token-0123456789"

func dial(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpcclient.Dial(addr, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func TestSharedTokenIsRequired(t *testing.T) {
	h := start(t, setup{opts: []grpcserver.Option{grpcserver.WithTransport(config.Transport{SharedToken: sharedToken, Reflection: true})}})
	addr := h.srv.GRPCAddr().String()
	tests := []struct {
		name string
		opts []grpc.DialOption
		want codes.Code
	}{
		{"no token", nil, codes.Unauthenticated},
		{"wrong token", grpcclient.Secure(config.Transport{SharedToken: "not-the-token-at-all-000"}), codes.Unauthenticated},
		{"shared token", grpcclient.Secure(config.Transport{SharedToken: sharedToken}), codes.OK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, addr, tt.opts...)
			_, err := invoke(testContext(t), t, conn, "Echo", "hi")
			if got := status.Code(err); got != tt.want {
				t.Errorf("Echo = %v (%v), want %v", got, err, tt.want)
			}
			// Streams are checked too.
			stream, err := conn.NewStream(testContext(t), echoStreamDesc, "/"+echoService+"/EchoStream")
			if err == nil {
				// A send the server has already refused is io.EOF; the
				// status is what the receive then reads (grpc.ClientStream).
				if err = stream.SendMsg(newEchoRequest("hi")); err == nil || errors.Is(err, io.EOF) {
					_ = stream.CloseSend()
					err = stream.RecvMsg(newEchoResponse(""))
				}
			}
			if got := status.Code(err); got != tt.want {
				t.Errorf("EchoStream = %v (%v), want %v", got, err, tt.want)
			}
			// Reflection is an API like any other.
			rs, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(testContext(t))
			if err == nil {
				if err = rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err == nil || errors.Is(err, io.EOF) {
					_, err = rs.Recv()
				}
			}
			if got := status.Code(err); got != tt.want {
				t.Errorf("reflection = %v (%v), want %v", got, err, tt.want)
			}
			// Probes carry no token and are answered anyway.
			if _, err := healthpb.NewHealthClient(conn).Check(testContext(t), &healthpb.HealthCheckRequest{}); err != nil {
				t.Errorf("health check: %v, want an answer without the token", err)
			}
		})
	}
}

func TestReflectionAndProfilerSwitches(t *testing.T) {
	tests := []struct {
		name                      string
		opts                      []grpcserver.Option
		wantReflection, wantPprof bool
	}{
		{"defaults without WithTransport", nil, true, false},
		{"GRPC_REFLECTION=false", []grpcserver.Option{grpcserver.WithTransport(config.Transport{Reflection: false})}, false, false},
		{"ADMIN_PPROF=true", []grpcserver.Option{grpcserver.WithTransport(config.Transport{Reflection: true, AdminPprof: true})}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := start(t, setup{opts: tt.opts})
			rs, err := reflectionpb.NewServerReflectionClient(h.conn).ServerReflectionInfo(testContext(t))
			if err == nil {
				if err = rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err == nil || errors.Is(err, io.EOF) {
					_, err = rs.Recv()
				}
			}
			if got := err == nil; got != tt.wantReflection {
				t.Errorf("reflection answered = %v (%v), want %v", got, err, tt.wantReflection)
			} else if !tt.wantReflection && status.Code(err) != codes.Unimplemented {
				t.Errorf("reflection off: %v, want Unimplemented", err)
			}
			code, _ := h.get(t, "/debug/pprof/goroutine?debug=1")
			if got := code == http.StatusOK; got != tt.wantPprof {
				t.Errorf("/debug/pprof/goroutine = %d, want served = %v", code, tt.wantPprof)
			}
		})
	}
}

func TestMutualTLS(t *testing.T) {
	p := transporttest.New(t)
	h := start(t, setup{opts: []grpcserver.Option{grpcserver.WithTransport(config.Transport{
		TLSCert: p.ServerCert, TLSKey: p.ServerKey, TLSCA: p.CA, Reflection: true,
	})}})
	addr := h.srv.GRPCAddr().String()
	tests := []struct {
		name string
		opts []grpc.DialOption
		ok   bool
	}{
		{"client certificate from the CA", grpcclient.Secure(p.Client()), true},
		{"certificate from another CA", grpcclient.Secure(p.Stranger()), false},
		{"plaintext", []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, false},
		{"unreadable files fail closed", grpcclient.Secure(config.Transport{TLSCert: "/nonexistent.pem", TLSKey: "/nonexistent.pem", TLSCA: p.CA}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := dial(t, addr, tt.opts...)
			got, err := invoke(testContext(t), t, conn, "Echo", "hi")
			if tt.ok && (err != nil || got == "") {
				t.Errorf("Echo = %q, %v; want an answer", got, err)
			}
			if !tt.ok && err == nil {
				t.Error("Echo answered; want the call refused")
			}
		})
	}
}

func TestTransportValidate(t *testing.T) {
	p := transporttest.New(t)
	tests := []struct {
		name string
		tr   config.Transport
		want string
	}{
		{"nothing", config.Transport{}, ""},
		{"token", config.Transport{SharedToken: sharedToken}, ""},
		{"short token", config.Transport{SharedToken: "abc"}, "GRPC_SHARED_TOKEN"},
		{"cert without key and CA", config.Transport{TLSCert: "c.pem"}, "GRPC_TLS_KEY"},
		{"all three, missing files", config.Transport{TLSCert: "/nonexistent/c.pem", TLSKey: "/nonexistent/k.pem", TLSCA: "/nonexistent/ca.pem"}, "GRPC_TLS_CERT"},
		{"all three, loadable", p.Client(), ""},
		{"CA file without certificates", config.Transport{TLSCert: p.ClientCert, TLSKey: p.ClientKey, TLSCA: p.ClientKey}, "GRPC_TLS_CA"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.tr.Validate()
			if tt.want == "" && err != nil {
				t.Errorf("Validate() = %v, want nil", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v, want an error naming %s", err, tt.want)
			}
		})
	}
}
