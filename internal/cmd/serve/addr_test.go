package serve_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/serve"
	"github.com/opmkit/opm/internal/iostreams"
)

// TestServeOnHostPort: -p HOST:PORT listens on that address only, as
// --http does (a bare port keeps upstream's every interface).
func TestServeOnHostPort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalog := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"example.com/p-bundle:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(catalog), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _, _, errOut := iostreams.Test()
	f := factory.NewWithEnv(s, map[string]string{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve.Run(ctx, f, &serve.Options{Dir: dir, Port: "127.0.0.1:0", OnServing: func(a net.Addr) { served <- a }})
	}()
	select {
	case a := <-served:
		if tcp, ok := a.(*net.TCPAddr); !ok || tcp.IP.String() != "127.0.0.1" {
			t.Errorf("served on %v, want 127.0.0.1", a)
		}
	case err := <-done:
		t.Fatalf("serve: %v\n%s", err, errOut)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
}
