package containertools

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeTool puts an executable script named like the tool first in PATH.
func fakeTool(t *testing.T, name, script string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestFindMissing(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Find(Podman)
	if !errors.Is(err, ErrNotFound) || err.Error() != "podman not found in PATH: install it or drop --image-builder" {
		t.Fatalf("err = %v", err)
	}
}

func TestRunStreamsOutput(t *testing.T) {
	fakeTool(t, "buildah", `echo "args: $*"; echo "to stderr" >&2`)
	r, err := Find(Buildah)
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	r.Stdout, r.Stderr = &out, &errOut
	if err := r.Build(context.Background(), "bundle.Dockerfile", "quay.io/x/y:1", t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "args: bud --file bundle.Dockerfile --tag quay.io/x/y:1 ") || errOut.String() != "to stderr\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errOut.String())
	}
}

func TestRunFailureAndCancel(t *testing.T) {
	// The build runs 10 minutes unless cancelled: Build returning within
	// the 2 minutes below is the cancel's doing, however loaded the
	// machine (the minutes only catch a hang).
	fakeTool(t, "docker", `if [ "$1" = push ]; then exit 3; fi; sleep 600`)
	r, _ := Find(Docker)
	r.Stdout, r.Stderr = &bytes.Buffer{}, &bytes.Buffer{}
	err := r.Push(context.Background(), "x:1")
	if err == nil || !strings.Contains(err.Error(), "docker push x:1") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("push: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	result := make(chan error, 1)
	go func() { result <- r.Build(ctx, "Dockerfile", "x:1", t.TempDir()) }()
	select {
	case err = <-result:
	case <-time.After(2 * time.Minute):
		t.Fatal("the build still runs 2 minutes after its context ended")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("cancel: %v, want the context's deadline", err)
	}
}

func TestParseTool(t *testing.T) {
	if tool, err := ParseTool("podman"); err != nil || tool != Podman {
		t.Error(tool, err)
	}
	if _, err := ParseTool("kaniko"); err == nil {
		t.Error("kaniko accepted")
	}
}
