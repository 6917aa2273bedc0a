package fbccache

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/mattn/go-sqlite3"
)

const catalog = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"example.com/p-bundle:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDigestSeesEveryChange: content, names and new files all change the
// digest; the same tree elsewhere has the same digest.
func TestDigestSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "p", "catalog.json"), catalog)
	d0, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	write(t, filepath.Join(other, "p", "catalog.json"), catalog)
	if d, _ := Digest(other); d != d0 {
		t.Error("the same tree elsewhere has another digest")
	}
	seen := map[string]string{d0: "original"}
	for name, change := range map[string]func(){
		"content": func() { write(t, filepath.Join(dir, "p", "catalog.json"), catalog+"\n") },
		"rename": func() {
			if err := os.Rename(filepath.Join(dir, "p", "catalog.json"), filepath.Join(dir, "p", "c.json")); err != nil {
				t.Fatal(err)
			}
		},
		"new file": func() { write(t, filepath.Join(dir, ".indexignore"), "README\n") },
	} {
		change()
		d, err := Digest(dir)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[d]; ok {
			t.Errorf("%s: same digest as %s", name, prev)
		}
		seen[d] = name
	}
}

// TestPrepareCache: the first Prepare builds, the second uses the cache,
// a changed catalog is refused when integrity is enforced and rebuilt
// otherwise; a foreign meta file is not trusted.
func TestPrepareCache(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "p", "catalog.json"), catalog)
	cache := filepath.Join(t.TempDir(), "cache")
	if _, _, err := Prepare(ctx, dir, Options{CacheDir: cache, EnforceIntegrity: true}); err == nil {
		t.Fatal("enforced integrity without a cache: want an error")
	}
	res, _, err := Prepare(ctx, dir, Options{CacheDir: cache})
	if err != nil || !res.Built {
		t.Fatalf("first: %+v, %v", res, err)
	}
	res, _, err = Prepare(ctx, dir, Options{CacheDir: cache, EnforceIntegrity: true})
	if err != nil || res.Built || res.Database != filepath.Join(cache, DatabaseFile) {
		t.Fatalf("second: %+v, %v", res, err)
	}
	write(t, filepath.Join(cache, MetaFile), `{"format":"upstream","digest":"`+res.Digest+`"}`)
	if ok, _ := Check(cache, res.Digest); ok {
		t.Error("a cache of another format is trusted")
	}
	res, cleanup, err := Prepare(ctx, dir, Options{})
	if err != nil || !res.Built {
		t.Fatalf("no cache dir: %+v, %v", res, err)
	}
	cleanup()
	if _, err := os.Stat(res.Database); !os.IsNotExist(err) {
		t.Errorf("cleanup left %s", res.Database)
	}
}

// TestEnforcedCacheCoversItsOwnFiles: the digest of the catalog is not
// enough; a cache whose database was edited, swapped for another catalog's,
// or joined by a file the build did not write is refused under
// --cache-enforce-integrity (saying which file), and rebuilt without it.
func TestEnforcedCacheCoversItsOwnFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "p", "catalog.json"), catalog)
	other := t.TempDir()
	write(t, filepath.Join(other, "q", "catalog.json"), strings.NewReplacer(`"p"`, `"q"`, `"p.v1`, `"q.v1`).Replace(catalog))
	otherCache := filepath.Join(t.TempDir(), "cache")
	if _, _, err := Prepare(ctx, other, Options{CacheDir: otherCache}); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		tamper func(cache string)
		want   string
	}{
		"edited database": {func(cache string) {
			db, err := sql.Open("sqlite3", filepath.Join(cache, DatabaseFile))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(`UPDATE package SET default_channel = 'beta'`); err != nil {
				t.Fatal(err)
			}
		}, "index.db in the cache changed since the cache was built"},
		"another catalog's database": {func(cache string) {
			data, err := os.ReadFile(filepath.Join(otherCache, DatabaseFile))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(cache, DatabaseFile), string(data))
		}, "index.db in the cache changed"},
		"extra file": {func(cache string) {
			write(t, filepath.Join(cache, "index.db-journal"), "x")
		}, "index.db-journal in the cache was not written by the cache build"},
		"database removed": {func(cache string) {
			if err := os.Remove(filepath.Join(cache, DatabaseFile)); err != nil {
				t.Fatal(err)
			}
		}, "index.db is missing"},
	} {
		t.Run(name, func(t *testing.T) {
			cache := filepath.Join(t.TempDir(), "cache")
			if _, _, err := Prepare(ctx, dir, Options{CacheDir: cache}); err != nil {
				t.Fatal(err)
			}
			tc.tamper(cache)
			_, _, err := Prepare(ctx, dir, Options{CacheDir: cache, EnforceIntegrity: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "--cache-only") {
				t.Fatalf("tampered cache under enforcement: %v, want a refusal saying %q and how to rebuild", err, tc.want)
			}
			res, _, err := Prepare(ctx, dir, Options{CacheDir: cache})
			if err != nil || !res.Built {
				t.Fatalf("without enforcement: %+v, %v; want it rebuilt", res, err)
			}
			os.Remove(filepath.Join(cache, "index.db-journal"))
			if _, _, err := Prepare(ctx, dir, Options{CacheDir: cache}); err != nil {
				t.Fatal(err)
			}
			if res, _, err := Prepare(ctx, dir, Options{CacheDir: cache, EnforceIntegrity: true}); err != nil || res.Built {
				t.Fatalf("rebuilt cache: %+v, %v", res, err)
			}
		})
	}
}
