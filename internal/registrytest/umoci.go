package registrytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// UmociLayout writes an image with umoci into the OCI layout dir (created
// when missing) under tag, holding files (path in the image → content) and
// labels. umoci writes manifests without the optional mediaType field, as
// some tools do, which is what the tests using it need.
func UmociLayout(t testing.TB, dir, tag string, files, labels map[string]string) {
	t.Helper()
	umoci := RequireTool(t, "umoci")
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(umoci, args...).CombinedOutput(); err != nil {
			t.Fatalf("umoci %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "index.json")); err != nil {
		run("init", "--layout", dir)
	}
	ref := dir + ":" + tag
	run("new", "--image", ref)
	for dst, data := range files {
		src := filepath.Join(t.TempDir(), "f")
		if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		run("insert", "--image", ref, src, dst)
	}
	for k, v := range labels {
		run("config", "--image", ref, "--config.label", k+"="+v)
	}
}
