// Package browsertest finds the headless browser that tests load opm's
// pages in: Debian's chromium.
package browsertest

import (
	"os"
	"os/exec"
	"testing"
)

// Chromium returns the path of Debian's chromium. Without it the test
// skips, saying why (use says what the test needs the browser for); under
// CI=true, where CI installs it, the test fails instead.
func Chromium(t testing.TB, use string) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	why := "no chromium on PATH (apt-get install chromium): " + use
	if os.Getenv("CI") == "true" {
		t.Fatal(why + " under CI=true")
	}
	t.Skip("skipping: " + why)
	return ""
}
