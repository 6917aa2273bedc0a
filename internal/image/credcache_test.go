package image

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/opmkit/opm/internal/registrytest"
)

// countingHelper installs docker-credential-NAME on PATH: it answers every
// "get" with user and pass and appends the server it was asked about to a
// file, one line per run. It returns a function reading those lines.
func countingHelper(t *testing.T, name, user, pass string) func() []string {
	t.Helper()
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	script := fmt.Sprintf("#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread server\necho \"$server\" >> %q\n"+
		"printf '{\"ServerURL\":\"%%s\",\"Username\":%q,\"Secret\":%q}\\n' \"$server\"\n", calls, user, pass)
	if err := os.WriteFile(filepath.Join(dir, "docker-credential-"+name), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		raw, err := os.ReadFile(calls)
		if os.IsNotExist(err) {
			return nil
		}
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(raw))
	}
}

// A client asks a credential helper once per registry however many images
// it pushes and opens, several at once, in several repositories; a new
// client asks again.
func TestCredentialHelperOncePerClient(t *testing.T) {
	r := registrytest.Start(t, registrytest.WithAuth("alice", "s3cret-pw"))
	home := isolateCredentials(t)
	calls := countingHelper(t, "counting", "alice", "s3cret-pw")
	auth := filepath.Join(home, "auth.json")
	if err := os.WriteFile(auth, []byte(`{"credHelpers":{"`+r.Addr+`":"counting"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	img, _ := BuildBundleImage(testBundle(), testLabels())
	c := mustClient(t, Options{AuthFile: auth, CAFile: r.CAFile})
	repos := []string{"a/one:1", "a/two:1", "b/three:1"}
	for _, repo := range repos {
		if _, err := c.Write(ctx, img, mustRef(t, r.Ref(repo))); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(repos))
	for range 4 {
		for _, repo := range repos {
			wg.Add(1)
			go func() {
				defer wg.Done()
				im, err := c.Open(ctx, mustRef(t, r.Ref(repo)))
				if err == nil {
					_, err = im.FS(ctx)
					_ = im.Close()
				}
				errs <- err
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := calls(); len(got) != 1 || got[0] != r.Addr {
		t.Fatalf("credential helper runs for one client: %q, want one for %s", got, r.Addr)
	}
	c2 := mustClient(t, Options{AuthFile: auth, CAFile: r.CAFile})
	im, err := c2.Open(ctx, mustRef(t, r.Ref(repos[0])))
	if err != nil {
		t.Fatal(err)
	}
	_ = im.Close()
	if got := calls(); len(got) != 2 {
		t.Fatalf("a second client did not ask the helper again: %q", got)
	}
}
