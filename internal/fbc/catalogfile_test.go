package fbc

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const okPackage = `{"schema":"olm.package","name":"p","defaultChannel":"c"}` + "\n"

// hostileCatalog is a catalog directory holding one good file and the
// named special file made by mk.
func hostileCatalog(t *testing.T, mk func(dir string) error) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.json"), []byte(okPackage), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := mk(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// within fails the test if f does not return in time: a reader blocked
// on a named pipe never returns.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute): // only a hang, whatever the load
		t.Fatalf("%s: still blocked after 2 minutes", what)
		return nil
	}
}

// TestCatalogReadersRefuseSpecialFiles: every reader of a catalog
// directory refuses, without blocking or reading it, a named pipe (as a
// catalog file or as .indexignore), a link to a device and a link out of
// the catalog.
func TestCatalogReadersRefuseSpecialFiles(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"schema":"olm.package","name":"secret"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		mk   func(dir string) error
		want string
	}{
		{"fifo", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, "b.json"), 0o644) }, "named pipe"},
		{"fifo indexignore", func(dir string) error { return syscall.Mkfifo(filepath.Join(dir, IgnoreFile), 0o644) }, "named pipe"},
		{"link to /dev/zero", func(dir string) error { return os.Symlink("/dev/zero", filepath.Join(dir, "b.json")) }, "b.json"},
		{"link out", func(dir string) error { return os.Symlink(outside, filepath.Join(dir, "b.json")) }, "b.json"},
	}
	readers := map[string]func(dir string) error{
		"LoadDirWith": func(dir string) error { _, err := LoadDirWith(dir, LoadOptions{}); return err },
		"ScanDir": func(dir string) error {
			s, err := ScanDir(dir, LoadOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Err()
		},
		"WalkBlobs": func(dir string) error {
			fsys, c, err := OpenDir(dir)
			if err != nil {
				return err
			}
			defer c.Close()
			return WalkBlobs(fsys, func(string, int, json.RawMessage) error { return nil })
		},
	}
	for _, c := range cases {
		dir := hostileCatalog(t, c.mk)
		for rn, read := range readers {
			err := within(t, c.name+" "+rn, func() error { return read(dir) })
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: got %v, want an error naming %q", c.name, rn, err, c.want)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("%s: %s read the file out of the catalog: %v", c.name, rn, err)
			}
		}
	}
}

// TestOpenFileRefusesDevices: a device is refused before it is read, on
// any file system (here /dev itself).
func TestOpenFileRefusesDevices(t *testing.T) {
	t.Parallel()
	_, err := OpenFile(os.DirFS("/dev"), "zero")
	if err == nil || !strings.Contains(err.Error(), "a device, not a regular file") {
		t.Fatalf("got %v, want a device refused", err)
	}
}

// TestKeysDifferingInCaseRefused: "package" and "Package" in one blob were
// both read by a decoder that ignores case, the last winning, and the
// bundle moved to another package without a word; upstream refuses top-level
// keys that differ only in letter case, and so does opm, naming both.
// Exact repeats keep the last value, as upstream; nested keys are not checked,
// as upstream.
func TestKeysDifferingInCaseRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blobs := okPackage +
		`{"schema":"olm.package","name":"q","defaultChannel":"c"}` + "\n" +
		`{"schema":"olm.bundle","package":"p","Package":"q","name":"b.v1","image":"example.com/b:v1"}` + "\n" +
		`{"schema":"example.com/x","package":"p","Foo":1,"fo\u006f":2}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	for rn, read := range map[string]func() error{
		"LoadDirWith": func() error { _, err := LoadDirWith(dir, LoadOptions{}); return err },
		"ScanDir": func() error {
			s, err := ScanDir(dir, LoadOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			return s.Err()
		},
	} {
		err := read()
		for _, want := range []string{`c.json:3`, `"package" and "Package"`, `c.json:4`, `"Foo" and "foo"`} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: got %v, want %s", rn, err, want)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(okPackage+`{"schema":"example.com/x","package":"p","a":1,"a":2,"o":{"k":1,"K":2}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDirWith(dir, LoadOptions{}); err != nil {
		t.Fatalf("exact repeats and nested keys are accepted, as upstream: %v", err)
	}
}

// TestInvalidUTF8Refused: a catalog file that is not UTF-8 was copied raw
// into render and migrate output (upstream replaces the bytes with U+FFFD,
// changing the catalog silently). It is refused with file and line.
func TestInvalidUTF8Refused(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"c.json", "c.yaml"} {
		dir := t.TempDir()
		data := okPackage + "{\"schema\":\"olm.package\",\"name\":\"q\",\"description\":\"bad \xff\xfe here\"}\n"
		if name == "c.yaml" {
			data = "schema: olm.package\nname: q\ndescription: \"bad \xff here\"\n"
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		want := name + ":2"
		if name == "c.yaml" {
			want = name + ":3"
		}
		for rn, read := range map[string]func() error{
			"LoadDirWith": func() error { _, err := LoadDirWith(dir, LoadOptions{}); return err },
			"ScanDir": func() error {
				s, err := ScanDir(dir, LoadOptions{})
				if err != nil {
					return err
				}
				defer s.Close()
				return s.Err()
			},
			"WalkBlobs": func() error {
				fsys, c, err := OpenDir(dir)
				if err != nil {
					return err
				}
				defer c.Close()
				return WalkBlobs(fsys, func(string, int, json.RawMessage) error { return nil })
			},
		} {
			err := read()
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "UTF-8") {
				t.Errorf("%s %s: got %v, want %s and UTF-8", name, rn, err, want)
			}
		}
	}
}
