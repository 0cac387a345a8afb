package e2e_test

import (
	"context"
	"errors"
	"io"
	"maps"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/config/transporttest"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
)

// TestServicesAuthenticateEachOther runs the whole stack with
// service-to-service auth on (GRPC_SHARED_TOKEN, mTLS, both): an alert
// through the gateway still travels gateway → notifier → grounding →
// search and comes back enriched from an indexed runbook, so every client
// on that path presents its credentials; and a caller without them is
// refused by every service while health checks stay open.
func TestServicesAuthenticateEachOther(t *testing.T) {
	const token = "e2e-shared-token-0123456789abcdef"
	pki := transporttest.New(t)
	mtls := map[string]string{"GRPC_TLS_CERT": pki.ServerCert, "GRPC_TLS_KEY": pki.ServerKey, "GRPC_TLS_CA": pki.CA}
	tests := []struct {
		name     string
		env      map[string]string
		insider  config.Transport
		outsider []grpc.DialOption
	}{
		{"shared token", map[string]string{"GRPC_SHARED_TOKEN": token},
			config.Transport{SharedToken: token},
			[]grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}},
		{"mTLS", mtls, pki.Client(), grpcclient.Secure(pki.Stranger())},
		{"both", func() map[string]string { m := maps.Clone(mtls); m["GRPC_SHARED_TOKEN"] = token; return m }(),
			config.Transport{TLSCert: pki.ClientCert, TLSKey: pki.ClientKey, TLSCA: pki.CA, SharedToken: token},
			grpcclient.Secure(pki.Client())}, // a trusted certificate, but no token
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startStack(t, maps.Clone(tt.env), "")
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()

			if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
				t.Fatalf("indexing the runbooks through the gateway: %v", err)
			}
			var created struct{ Alert alertView }
			if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts", map[string]any{
				"text": "Postgres refuses connections: too many clients already",
			}, &created); err != nil {
				t.Fatalf("posting an alert: %v", err)
			}
			var got alertView
			eventually(t, time.Minute, "the alert to be DELIVERED", func() bool {
				var resp struct{ Alert alertView }
				if _, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+created.Alert.ID, nil, &resp); err != nil {
					return false
				}
				got = resp.Alert
				return got.Status == "DELIVERED" || got.Status == "FAILED"
			})
			if got.Status != "DELIVERED" || !strings.Contains(got.Message.Text, "Enriched Context") {
				t.Errorf("alert %s %s, message:\n%s\nwant DELIVERED and enriched (every hop authenticated)", got.Status, got.Error, got.Message.Text)
			}

			for name, addr := range s.Addrs {
				insider := dialFor(t, addr, grpcclient.Secure(tt.insider)...)
				if _, err := healthpb.NewHealthClient(insider).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
					t.Errorf("%s: health check with credentials: %v", name, err)
				}
				// Reflection is served by every service (a method of each
				// service's own would do; unregistered ones never reach
				// the interceptors).
				outsider := dialFor(t, addr, tt.outsider...)
				stream, err := reflectionpb.NewServerReflectionClient(outsider).ServerReflectionInfo(ctx)
				if err == nil {
					// A send the server has already refused is io.EOF; the
					// receive reads the status (grpc.ClientStream).
					if err = stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err == nil || errors.Is(err, io.EOF) {
						_, err = stream.Recv()
					}
				}
				if err == nil {
					t.Errorf("%s answered a caller without credentials", name)
				} else if code := status.Code(err); code != codes.Unauthenticated && code != codes.Unavailable {
					t.Errorf("%s: caller without credentials got %v, want Unauthenticated (token) or Unavailable (handshake refused)", name, err)
				}
			}
		})
	}
}

func dialFor(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	conn, err := grpcclient.Dial(addr, nil, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
