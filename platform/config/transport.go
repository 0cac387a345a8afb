package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Transport is how the services talk to each other over gRPC, read by
// every service (it is part of [Common]). The gRPC ports are internal:
// without a shared token or mTLS, anything that reaches them can call them,
// and the actor metadata the gateway sets (platform/actor) is only as
// trustworthy as that boundary.
type Transport struct {
	// SharedToken, when set, is required as `authorization: Bearer <token>`
	// on every gRPC call a service accepts (health checks stay open for
	// probes) and sent on every call a service or the gateway makes.
	SharedToken string `env:"GRPC_SHARED_TOKEN" secret:"true"`
	// TLSCert and TLSKey are this process's certificate and key (PEM files)
	// for mTLS: servers present them, clients present them as their client
	// certificate. TLSCA is the CA bundle both sides verify the peer's
	// certificate against; client certificates are required and verified.
	TLSCert string `env:"GRPC_TLS_CERT"`
	TLSKey  string `env:"GRPC_TLS_KEY"`
	TLSCA   string `env:"GRPC_TLS_CA"`
	// Reflection serves gRPC server reflection (grpcurl list); false turns
	// it off.
	Reflection bool `env:"GRPC_REFLECTION" envDefault:"true"`
	// AdminPprof serves Go's profiler under /debug/pprof/ on the admin port;
	// off by default (profiles expose memory contents and cost CPU).
	AdminPprof bool `env:"ADMIN_PPROF" envDefault:"false"`
}

// minSharedTokenLen keeps GRPC_SHARED_TOKEN from being guessable.
const minSharedTokenLen = 16

// TLS reports whether mTLS is configured.
func (t Transport) TLS() bool { return t.TLSCert != "" }

// Validate checks that the settings are complete and that the mTLS files
// load.
func (t Transport) Validate() error {
	var errs []error
	if t.SharedToken != "" && len(strings.TrimSpace(t.SharedToken)) < minSharedTokenLen {
		errs = append(errs, fmt.Errorf("GRPC_SHARED_TOKEN: must be at least %d characters (e.g. openssl rand -hex 32)", minSharedTokenLen))
	}
	set := 0
	for _, v := range []string{t.TLSCert, t.TLSKey, t.TLSCA} {
		if v != "" {
			set++
		}
	}
	switch set {
	case 0:
	case 3:
		// Unreadable or mismatched files are a configuration error at
		// start-up, not a failure on the first call.
		if _, _, err := t.load(); err != nil {
			errs = append(errs, err)
		}
	default:
		errs = append(errs, errors.New("GRPC_TLS_CERT, GRPC_TLS_KEY and GRPC_TLS_CA: set all three for mTLS, or none"))
	}
	return errors.Join(errs...)
}

func (t Transport) load() (tls.Certificate, *x509.CertPool, error) {
	cert, err := tls.LoadX509KeyPair(t.TLSCert, t.TLSKey)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("GRPC_TLS_CERT/GRPC_TLS_KEY: %w", err)
	}
	pem, err := os.ReadFile(t.TLSCA)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("GRPC_TLS_CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return tls.Certificate{}, nil, fmt.Errorf("GRPC_TLS_CA: %s holds no PEM certificate", t.TLSCA)
	}
	return cert, pool, nil
}

// ServerTLSConfig is the mTLS configuration of a gRPC server: it presents
// GRPC_TLS_CERT and requires a client certificate signed by GRPC_TLS_CA.
func (t Transport) ServerTLSConfig() (*tls.Config, error) {
	cert, pool, err := t.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS12,
	}, nil
}

// ClientTLSConfig is the mTLS configuration of a gRPC client: it verifies
// the server against GRPC_TLS_CA and presents GRPC_TLS_CERT.
func (t Transport) ClientTLSConfig() (*tls.Config, error) {
	cert, pool, err := t.load()
	if err != nil {
		return nil, err
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		MinVersion:   tls.VersionTLS12,
	}, nil
}
