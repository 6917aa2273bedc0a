package shareddata

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestRootIsBesideTheCheckout(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(wd))), "shared")
	if got := Root(); got != want {
		t.Errorf("Root() = %s, want %s", got, want)
	}
	if got := Path("corpus", "real"); got != filepath.Join(want, "corpus", "real") {
		t.Errorf("Path = %s", got)
	}
}

// A missing part skips with the reason, and fails under CI=true: the
// test binary runs itself with the helper test selected.
func TestRequireSkipsOrFails(t *testing.T) {
	if os.Getenv("SHAREDDATA_HELPER") == "1" {
		Require(t, "no-such-part-of-shared")
		t.Fatal("Require returned for a missing path")
	}
	for _, tc := range []struct {
		ci, want string
		fails    bool
	}{
		{"", "--- SKIP", false},
		{"false", "--- SKIP", false},
		{"true", "--- FAIL", true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireSkipsOrFails$", "-test.v")
		cmd.Env = append(os.Environ(), "SHAREDDATA_HELPER=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.fails || !strings.Contains(string(out), tc.want) {
			t.Errorf("CI=%q: err %v, want %s in:\n%s", tc.ci, err, tc.want, out)
		}
		if !strings.Contains(string(out), "../shared (real bundles and upstream reference outputs") {
			t.Errorf("CI=%q: the reason is not printed:\n%s", tc.ci, out)
		}
	}
}
