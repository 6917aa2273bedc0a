package registry

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// selfSigned writes a CA-signed server certificate for 127.0.0.1 and
// localhost; it returns the CA file and the server's TLS certificate.
func selfSigned(t *testing.T) (string, tls.Certificate) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	return caFile, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}
}

func TestProbeTLS(t *testing.T) {
	caFile, cert := selfSigned(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g, _ := NewGRPCServer(openRef(t, "etcd.replaces.db"), grpc.Creds(credentials.NewTLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})))
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()
	addr := lis.Addr().String()
	ctx := context.Background()

	if err := Probe(ctx, ProbeOptions{Addr: addr, TLS: true, TLSCACert: caFile}); err != nil {
		t.Errorf("TLS with the CA: %v", err)
	}
	if err := Probe(ctx, ProbeOptions{Addr: addr, TLS: true, TLSNoVerify: true}); err != nil {
		t.Errorf("TLS without verification: %v", err)
	}
	var pe *ProbeError
	// Not trusted (system CAs), and plaintext against a TLS server: no
	// connection.
	for _, o := range []ProbeOptions{{Addr: addr, TLS: true}, {Addr: addr}} {
		o.ConnectTimeout = 300 * time.Millisecond
		if err := Probe(ctx, o); !errors.As(err, &pe) || pe.Failure != ProbeConnectFailed {
			t.Errorf("probe %+v: %v, want a connect failure", o, err)
		}
	}
}

func TestDebugLogsEveryCall(t *testing.T) {
	var logs syncBuffer
	srv := startServer(t, Options{DB: refDB(t, "etcd.replaces.db"), Debug: true,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err := Probe(context.Background(), ProbeOptions{Addr: srv.addr}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, srv.conn, "api.Registry/ListPackages", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, srv.conn, "api.Registry/GetPackage", []byte(`{"name":"nope"}`)); err == nil {
		t.Fatal("GetPackage nope: no error")
	}
	for _, want := range []string{"method=/grpc.health.v1.Health/Check duration=", "method=/api.Registry/ListPackages", "method=/api.Registry/GetPackage duration="} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("debug log lacks %q:\n%s", want, logs.String())
		}
	}
	if !strings.Contains(logs.String(), "code=Unknown") {
		t.Errorf("debug log lacks the failed call's code:\n%s", logs.String())
	}
}
