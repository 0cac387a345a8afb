// Package transporttest makes throwaway certificates for tests of mTLS
// between services (config.Transport's GRPC_TLS_* files).
package transporttest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/config"
)

// PKI is a CA and certificates it signed, as PEM files in a test's temp
// directory, plus a stranger: a client certificate from another CA.
type PKI struct {
	// CA is the CA bundle.
	CA string
	// ServerCert and ServerKey are valid for 127.0.0.1 and localhost, for
	// servers and clients alike (one identity per process, as a service
	// that both serves and dials uses).
	ServerCert, ServerKey string
	// ClientCert and ClientKey are a client-only certificate from the CA.
	ClientCert, ClientKey string
	// StrangerCert and StrangerKey come from a CA nobody trusts.
	StrangerCert, StrangerKey string
}

// Server is the transport of a process presenting ServerCert.
func (p PKI) Server() config.Transport {
	return config.Transport{TLSCert: p.ServerCert, TLSKey: p.ServerKey, TLSCA: p.CA, Reflection: true}
}

// Client is the transport of a client presenting ClientCert.
func (p PKI) Client() config.Transport {
	return config.Transport{TLSCert: p.ClientCert, TLSKey: p.ClientKey, TLSCA: p.CA}
}

// Stranger is a client presenting a certificate from another CA.
func (p PKI) Stranger() config.Transport {
	return config.Transport{TLSCert: p.StrangerCert, TLSKey: p.StrangerKey, TLSCA: p.CA}
}

// New writes a fresh PKI into t.TempDir().
func New(t testing.TB) PKI {
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
	var p PKI
	p.CA = write("ca.pem", "CERTIFICATE", caDER)

	sk := newKey()
	_, sDER := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "server"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey, sk)
	p.ServerCert, p.ServerKey = write("server.pem", "CERTIFICATE", sDER), write("server-key.pem", "EC PRIVATE KEY", keyDER(sk))

	ck := newKey()
	_, cDER := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, ca, caKey, ck)
	p.ClientCert, p.ClientKey = write("client.pem", "CERTIFICATE", cDER), write("client-key.pem", "EC PRIVATE KEY", keyDER(ck))

	otherKey := newKey()
	other, _ := issue(caTmpl("someone else's CA"), nil, nil, otherKey)
	xk := newKey()
	_, xDER := issue(&x509.Certificate{Subject: pkix.Name{CommonName: "stranger"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature}, other, otherKey, xk)
	p.StrangerCert, p.StrangerKey = write("stranger.pem", "CERTIFICATE", xDER), write("stranger-key.pem", "EC PRIVATE KEY", keyDER(xk))
	return p
}
