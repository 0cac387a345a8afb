package grpcserver_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
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
				if err = stream.SendMsg(newEchoRequest("hi")); err == nil {
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
				if err = rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err == nil {
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
				if err = rs.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err == nil {
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

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate (both signed by the CA) into dir, and a second, unrelated CA's
// client certificate.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey, strangerCert, strangerKey string
}

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	serial := int64(1)
	issue := func(tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, key *ecdsa.PrivateKey) (*x509.Certificate, []byte) {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c, der
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return der
	}
	caTmpl := func(cn string) *x509.Certificate {
		return &x509.Certificate{Subject: pkix.Name{CommonName: cn}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	}
	caKey := newKey()
	ca, caDER := issue(caTmpl("groundcrew test CA"), nil, nil, caKey)
	var p pki
	p.ca = write("ca.pem", "CERTIFICATE", caDER)

	sk := newKey()
	_, sDER := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "server"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey, sk)
	p.serverCert, p.serverKey = write("server.pem", "CERTIFICATE", sDER), write("server-key.pem", "EC PRIVATE KEY", keyDER(sk))

	ck := newKey()
	_, cDER := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey, ck)
	p.clientCert, p.clientKey = write("client.pem", "CERTIFICATE", cDER), write("client-key.pem", "EC PRIVATE KEY", keyDER(ck))

	otherKey := newKey()
	other, _ := issue(caTmpl("someone else's CA"), nil, nil, otherKey)
	xk := newKey()
	_, xDER := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "stranger"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, other, otherKey, xk)
	p.strangerCert, p.strangerKey = write("stranger.pem", "CERTIFICATE", xDER), write("stranger-key.pem", "EC PRIVATE KEY", keyDER(xk))
	return p
}

func TestMutualTLS(t *testing.T) {
	p := newPKI(t)
	h := start(t, setup{opts: []grpcserver.Option{grpcserver.WithTransport(config.Transport{
		TLSCert: p.serverCert, TLSKey: p.serverKey, TLSCA: p.ca, Reflection: true,
	})}})
	addr := h.srv.GRPCAddr().String()
	tests := []struct {
		name string
		opts []grpc.DialOption
		ok   bool
	}{
		{"client certificate from the CA", grpcclient.Secure(config.Transport{TLSCert: p.clientCert, TLSKey: p.clientKey, TLSCA: p.ca}), true},
		{"certificate from another CA", grpcclient.Secure(config.Transport{TLSCert: p.strangerCert, TLSKey: p.strangerKey, TLSCA: p.ca}), false},
		{"plaintext", []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}, false},
		{"unreadable files fail closed", grpcclient.Secure(config.Transport{TLSCert: "/nonexistent.pem", TLSKey: "/nonexistent.pem", TLSCA: p.ca}), false},
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
	p := newPKI(t)
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
		{"all three, loadable", config.Transport{TLSCert: p.clientCert, TLSKey: p.clientKey, TLSCA: p.ca}, ""},
		{"CA file without certificates", config.Transport{TLSCert: p.clientCert, TLSKey: p.clientKey, TLSCA: p.clientKey}, "GRPC_TLS_CA"},
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
