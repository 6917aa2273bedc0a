package api

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the Go code from registry.proto into
// a temporary directory (hack/proto.sh: protoc plus the pinned plugins) and
// fails when the committed files differ: run `make proto` and commit.
func TestGeneratedCodeIsCurrent(t *testing.T) {
	if _, err := exec.LookPath("protoc"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("protoc is required under CI (apt-get install protobuf-compiler libprotobuf-dev): %v", err)
		}
		t.Skipf("skipping: protoc not installed (apt-get install protobuf-compiler libprotobuf-dev): %v", err)
	}
	out := t.TempDir()
	cmd := exec.Command(filepath.Join("..", "..", "..", "hack", "proto.sh"), out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/proto.sh: %v\n%s", err, b)
	}
	for _, f := range []string{"registry.pb.go", "registry_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is stale: run `make proto` and commit the result", f)
		}
	}
}
