package image

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// liveHeap is the heap in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A client parses its auth files once and finds each repository's
// credentials in what it parsed: thousands of repositories keep nothing
// per repository, the most specific entry still wins, and a file changed
// after it was parsed is not read again by that client (a new one reads
// it).
func TestCredentialsStateFlatAcrossRepositories(t *testing.T) {
	home := isolateCredentials(t)
	p := filepath.Join(home, "auth.json")
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	write := func(suffix string) {
		t.Helper()
		body := `{"auths":{
			"quay.io":{"auth":"` + b64("u:host"+suffix) + `"},
			"quay.io/org":{"auth":"` + b64("u:org"+suffix) + `"},
			"quay.io/org/special":{"auth":"` + b64("u:repo"+suffix) + `"}}}`
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	c := mustClient(t, Options{AuthFile: p})
	check := func(repo, want string) {
		t.Helper()
		cred, err := c.credentials(repo)
		if err != nil || cred.Password != want || cred.Source != p {
			t.Fatalf("%s: got %q from %q, %v; want %q from %s", repo, cred.Password, cred.Source, err, want, p)
		}
	}
	// The first lookups parse the file and fill what a client keeps once.
	for i := range 100 {
		check(fmt.Sprintf("quay.io/warm/r%d", i), "host")
	}
	before := liveHeap()
	const n = 20000
	for i := range n {
		check(fmt.Sprintf("quay.io/org/operand-%d", i), "org")
		check(fmt.Sprintf("quay.io/vendor-%d/operand", i), "host")
	}
	grown := int64(liveHeap()) - int64(before)
	t.Logf("heap after credentials of %d repositories: %+d bytes (%.1f a repository)", 2*n, grown, float64(grown)/(2*n))
	// Kept per repository, 2n of them would be megabytes (7.4 MB, 185
	// bytes each, when a client kept them so); a bound this loose only
	// catches that.
	if grown > 1<<20 {
		t.Errorf("heap grew %d bytes over %d repositories: credentials are kept per repository", grown, 2*n)
	}
	check("quay.io/org/special", "repo")
	check("quay.io/org/special/deep", "repo")
	check("quay.io/org/x", "org")

	write("-changed")
	check("quay.io/org/special", "repo")
	check("quay.io/org/y", "org")
	c = mustClient(t, Options{AuthFile: p})
	check("quay.io/org/special", "repo-changed")
	runtime.KeepAlive(c)
}

// A credentials file that cannot be used gives the client the same error
// as LookupCredentials, naming the file, for every repository.
func TestCredentialsStateFileErrors(t *testing.T) {
	home := isolateCredentials(t)
	p := filepath.Join(home, "auth.json")
	if err := os.WriteFile(p, []byte(`{"auths":{"x":{"auth":"c2VjcmV0"`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := mustClient(t, Options{AuthFile: p})
	_, want := c.LookupCredentials("x/y")
	if want == nil || !strings.Contains(want.Error(), "credentials file "+p+" is not valid JSON") || strings.Contains(want.Error(), "c2VjcmV0") {
		t.Fatalf("LookupCredentials: %v", want)
	}
	for _, repo := range []string{"x/y", "x/z", "other.example/a/b"} {
		if _, err := c.credentials(repo); err == nil || err.Error() != want.Error() {
			t.Errorf("%s: %v, want %v", repo, err, want)
		}
	}

	missing := filepath.Join(home, "missing.json")
	c = mustClient(t, Options{AuthFile: missing})
	_, want = c.LookupCredentials("x/y")
	if want == nil || !strings.Contains(want.Error(), missing) {
		t.Fatalf("missing --authfile: %v", want)
	}
	for _, repo := range []string{"x/y", "x/z"} {
		if _, err := c.credentials(repo); err == nil || err.Error() != want.Error() {
			t.Errorf("missing --authfile, %s: %v, want %v", repo, err, want)
		}
	}
}
