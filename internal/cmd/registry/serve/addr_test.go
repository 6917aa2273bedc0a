package serve_test

import (
	"context"
	"net"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/registry/serve"
	"github.com/opmkit/opm/internal/iostreams"
)

func TestListenAddr(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"50051":           ":50051", // upstream's meaning: every interface
		"0":               ":0",
		"127.0.0.1:50051": "127.0.0.1:50051",
		"localhost:8080":  "localhost:8080",
		"[::1]:50051":     "[::1]:50051",
		"0.0.0.0:050051":  "0.0.0.0:50051",
	} {
		got, err := serve.ListenAddr(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for in, want := range map[string]string{
		"http":            "want a TCP port number (0 to 65535) or HOST:PORT",
		"70000":           "want a TCP port number",
		":50051":          "the host is empty",
		"::1:50051":       "an IPv6 host in brackets",
		"127.0.0.1:":      "want a TCP port number",
		"127.0.0.1:99999": "want a TCP port number",
	} {
		_, err := serve.ListenAddr(in)
		assert.ErrorContains(t, err, want, in)
	}
}

// TestServeOnHostPort: -p 127.0.0.1:PORT listens on the loopback address
// only.
func TestServeOnHostPort(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "index.db")
	r := cmdtest.Run(t, "index", "add", "--database", db, "--bundles", "../../../../testdata/bundles/valid")
	require.Equal(t, 0, r.Code, r.ErrOut)

	s, _, _, _ := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, f, &serve.Options{Database: db, Port: "127.0.0.1:0", TimeoutSeconds: "infinite",
			OnServing: func(a net.Addr) { served <- a }})
	}()
	select {
	case a := <-served:
		tcp, ok := a.(*net.TCPAddr)
		require.True(t, ok, "%T", a)
		assert.Equal(t, "127.0.0.1", tcp.IP.String())
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	cancel()
	require.NoError(t, <-done)

	r = cmdtest.Run(t, "registry", "serve", "-d", db, "-p", ":50051")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, `--port ":50051": want a TCP port number (0 to 65535) or HOST:PORT: the host is empty`)
}
